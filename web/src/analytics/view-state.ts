// The analytics view (period or custom range, filters, charted metric) lives in the query string,
// so a URL shares the view and the back button undoes a change. Read from `location.search`,
// written with the History API; a `popstate` event is dispatched after each write so that every
// listener (this hook and the app's router) sees the new URL.
import { useEffect, useState } from 'preact/hooks';

export const PERIODS = [
  { value: 'today', label: 'Today' },
  { value: 'yesterday', label: 'Yesterday' },
  { value: '7d', label: 'Last 7 days' },
  { value: '30d', label: 'Last 30 days' },
  { value: 'mtd', label: 'Month to date' },
  { value: 'lastmonth', label: 'Last month' },
  { value: '12mo', label: 'Last 12 months' },
  { value: 'all', label: 'All time' },
  { value: 'custom', label: 'Custom range' },
] as const;

export type Period = (typeof PERIODS)[number]['value'];
export const DEFAULT_PERIOD: Period = '30d';

/** The filter dimensions of website-api.md section 2, with the names shown on the chips. */
export const DIMENSION_LABELS = {
  country: 'Country',
  region: 'Region',
  city: 'City',
  device: 'Device',
  browser: 'Browser',
  os: 'Operating system',
  referrer: 'Source',
  page: 'Page',
  entry_page: 'Entry page',
  hostname: 'Hostname',
  goal: 'Goal',
  ref: 'Ref',
  source: 'Source param',
  via: 'Via',
  utm_source: 'UTM source',
  utm_medium: 'UTM medium',
  utm_campaign: 'UTM campaign',
  utm_term: 'UTM term',
  utm_content: 'UTM content',
} as const;

export type Dimension = keyof typeof DIMENSION_LABELS;

export const OPERATORS = ['is', 'is_not', 'contains', 'does_not_contain'] as const;
export type Operator = (typeof OPERATORS)[number];

export interface Filter {
  dimension: Dimension;
  operator: Operator;
  values: string[];
}

export const CHART_METRICS = ['visitors', 'sessions', 'pageviews', 'revenue', 'conversion_rate'] as const;
export type ChartMetric = (typeof CHART_METRICS)[number];

/** The second, dashed line of the chart: the same days of the previous period or a year before. */
export const COMPARISONS = [
  { value: 'off', label: 'No comparison' },
  { value: 'previous', label: 'Previous period' },
  { value: 'year', label: 'Year before' },
] as const;
export type Comparison = (typeof COMPARISONS)[number]['value'];

export interface ViewState {
  period: Period;
  /** YYYY-MM-DD, with `period: 'custom'`. */
  from?: string;
  to?: string;
  filters: Filter[];
  metric: ChartMetric;
  compare: Comparison;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

export function isDay(value: string | null | undefined): value is string {
  return !!value && DAY.test(value) && !Number.isNaN(new Date(`${value}T00:00:00Z`).getTime());
}

function isDimension(name: string): name is Dimension {
  return Object.prototype.hasOwnProperty.call(DIMENSION_LABELS, name);
}

/** `is:US,DE` (or `US` alone) -> a filter; null when the value is empty. */
export function parseFilterValue(dimension: Dimension, raw: string): Filter | null {
  let operator: Operator = 'is';
  let rest = raw;
  const colon = raw.indexOf(':');
  if (colon > 0 && (OPERATORS as readonly string[]).includes(raw.slice(0, colon))) {
    operator = raw.slice(0, colon) as Operator;
    rest = raw.slice(colon + 1);
  }
  const values = rest
    .split(',')
    .map((value) => value.trim())
    .filter(Boolean);
  return values.length ? { dimension, operator, values } : null;
}

export function filterParam(filter: Filter): string {
  return `${filter.operator}:${filter.values.join(',')}`;
}

export function parseView(search: string): ViewState {
  const query = new URLSearchParams(search);
  const filters: Filter[] = [];
  for (const [name, raw] of query) {
    if (!name.startsWith('filter_')) continue;
    const dimension = name.slice('filter_'.length);
    if (!isDimension(dimension) || filters.some((filter) => filter.dimension === dimension)) continue;
    const filter = parseFilterValue(dimension, raw);
    if (filter) filters.push(filter);
  }
  const metricParam = query.get('metric');
  const metric = (CHART_METRICS as readonly string[]).includes(metricParam ?? '') ? (metricParam as ChartMetric) : 'visitors';
  const compareParam = query.get('compare');
  const compare = COMPARISONS.some((option) => option.value === compareParam) ? (compareParam as Comparison) : 'off';
  const from = query.get('from');
  const to = query.get('to');
  if (isDay(from) && isDay(to)) {
    return { period: 'custom', from: from <= to ? from : to, to: from <= to ? to : from, filters, metric, compare };
  }
  const periodParam = query.get('period');
  const known = PERIODS.some((period) => period.value === periodParam && period.value !== 'custom');
  return { period: known ? (periodParam as Period) : DEFAULT_PERIOD, filters, metric, compare };
}

/** The query string of `view`, keeping the parameters that are not the view's (a tab, a modal). */
export function viewSearch(view: ViewState, base: string = location.search): string {
  const query = new URLSearchParams(base);
  for (const name of [...query.keys()]) {
    if (['period', 'from', 'to', 'metric', 'compare'].includes(name) || name.startsWith('filter_')) query.delete(name);
  }
  if (view.period === 'custom' && view.from && view.to) {
    query.set('from', view.from);
    query.set('to', view.to);
  } else if (view.period !== 'custom') {
    query.set('period', view.period);
  }
  for (const filter of view.filters) query.set(`filter_${filter.dimension}`, filterParam(filter));
  if (view.metric !== 'visitors') query.set('metric', view.metric);
  if (view.compare !== 'off') query.set('compare', view.compare);
  const text = query.toString();
  return text ? `?${text}` : '';
}

/** Writes `view` into the URL and tells every listener. */
export function writeView(view: ViewState, options: { replace?: boolean } = {}): void {
  const search = viewSearch(view);
  if (search === location.search) return;
  const target = `${location.pathname}${search}${location.hash}`;
  if (options.replace) history.replaceState(history.state, '', target);
  else history.pushState(null, '', target);
  window.dispatchEvent(new PopStateEvent('popstate', { state: history.state }));
}

export type UpdateView = (patch: Partial<ViewState>, options?: { replace?: boolean }) => void;

/** The view of the current URL, and a function that changes it (a new history entry by default). */
export function useViewState(): [ViewState, UpdateView] {
  const [search, setSearch] = useState(() => location.search);
  useEffect(() => {
    const sync = () => setSearch(location.search);
    window.addEventListener('popstate', sync);
    sync();
    return () => window.removeEventListener('popstate', sync);
  }, []);
  const view = parseView(search);
  const update: UpdateView = (patch, options) => writeView({ ...parseView(location.search), ...patch }, options);
  return [view, update];
}

/** The filters with `filter` in place of any filter on the same dimension. */
export function withFilter(filters: Filter[], filter: Filter): Filter[] {
  return [...filters.filter((existing) => existing.dimension !== filter.dimension), filter];
}

/** The filters with `filter` where `replaced` was (its place kept), or added when it was not there. */
export function replaceFilter(filters: Filter[], replaced: Dimension | null, filter: Filter): Filter[] {
  const at = replaced === null ? -1 : filters.findIndex((existing) => existing.dimension === replaced);
  const others = filters.filter((existing) => existing.dimension !== filter.dimension && existing.dimension !== replaced);
  if (at < 0) return [...others, filter];
  const before = filters.slice(0, at).filter((existing) => others.includes(existing)).length;
  return [...others.slice(0, before), filter, ...others.slice(before)];
}

/**
 * Whether the filter's values are parts of values (contains, does not contain; the API takes them
 * on every dimension, a country's as part of its code): shown as typed, never as a label.
 */
export function isSubstringFilter(filter: Pick<Filter, 'operator'>): boolean {
  return filter.operator === 'contains' || filter.operator === 'does_not_contain';
}

export function withoutFilter(filters: Filter[], dimension: Dimension): Filter[] {
  return filters.filter((existing) => existing.dimension !== dimension);
}

/** The `filter_<dim>` query parameters of every analytics read. */
export function filterQuery(filters: Filter[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const filter of filters) out[`filter_${filter.dimension}`] = filterParam(filter);
  return out;
}

/** Whether `value` can be sent as one filter value (the server splits on commas). */
export function filterable(value: string | null | undefined): value is string {
  return typeof value === 'string' && value.trim() !== '' && !value.includes(',') && value.length <= 512;
}
