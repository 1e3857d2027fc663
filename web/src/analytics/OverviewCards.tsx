// The top numbers, each compared with the previous period of the same length. The cards of the
// metrics the time series has are buttons: the selected one is charted (as Plausible does).
import { list, request } from '../api.ts';
import { formatDuration, formatExact, formatMoney, formatNumber, formatPercent } from './format.ts';
import { goalTitle, useGoals } from './goal-display.tsx';
import { type ResolvedRange, queryKey, readQuery } from './range.ts';
import { useFetch } from './use-fetch.ts';
import type { ChartMetric, Filter } from './view-state.ts';

export interface Overview {
  visitors: number;
  sessions: number;
  pageviews: number;
  bounce_rate: number;
  avg_session_duration: number;
  currency: string;
  revenue: number;
  payments: number;
  revenue_per_visitor: number;
  conversion_rate: number;
}

type Key = 'visitors' | 'sessions' | 'pageviews' | 'bounce_rate' | 'avg_session_duration' | 'revenue' | 'conversion_rate';

interface Card {
  key: Key;
  label: string;
  kind: 'count' | 'rate' | 'duration' | 'money';
  chart?: ChartMetric;
  lowerIsBetter?: boolean;
}

const CARDS: Card[] = [
  { key: 'visitors', label: 'Unique visitors', kind: 'count', chart: 'visitors' },
  { key: 'sessions', label: 'Visits', kind: 'count', chart: 'sessions' },
  { key: 'pageviews', label: 'Pageviews', kind: 'count', chart: 'pageviews' },
  { key: 'bounce_rate', label: 'Bounce rate', kind: 'rate', lowerIsBetter: true },
  { key: 'avg_session_duration', label: 'Visit duration', kind: 'duration' },
  { key: 'revenue', label: 'Revenue', kind: 'money', chart: 'revenue' },
  { key: 'conversion_rate', label: 'Conversion rate', kind: 'rate', chart: 'conversion_rate' },
];

export const METRIC_LABELS: Record<ChartMetric, string> = {
  visitors: 'Unique visitors',
  sessions: 'Visits',
  pageviews: 'Pageviews',
  revenue: 'Revenue',
  conversion_rate: 'Conversion rate',
};

function display(card: Card, value: number, currency: string): string {
  if (card.kind === 'rate') return formatPercent(value);
  if (card.kind === 'duration') return formatDuration(value);
  if (card.kind === 'money') return formatMoney(value, currency);
  return formatNumber(value);
}

interface Change {
  symbol: '▲' | '▼' | '';
  text: string;
  spoken: string;
  tone: 'good' | 'bad' | 'neutral';
}

/** Counts compare in percent; rates (already percentages) in percentage points. */
export function compare(card: Card, current: number, previous: number): Change {
  const rate = card.kind === 'rate';
  let delta: number;
  if (rate) delta = Math.round((current - previous) * 10) / 10;
  else if (previous === 0) {
    if (current === 0) return { symbol: '', text: '0%', spoken: 'no change from the previous period', tone: 'neutral' };
    return { symbol: '▲', text: 'new', spoken: 'up from none in the previous period', tone: card.lowerIsBetter ? 'bad' : 'good' };
  } else delta = Math.round(((current - previous) / previous) * 100);
  if (delta === 0) return { symbol: '', text: rate ? '0 pp' : '0%', spoken: 'no change from the previous period', tone: 'neutral' };
  const up = delta > 0;
  const amount = Math.abs(delta);
  const unit = rate ? ' pp' : '%';
  const spokenUnit = rate ? ` percentage point${amount === 1 ? '' : 's'}` : '%';
  const good = up !== !!card.lowerIsBetter;
  return {
    symbol: up ? '▲' : '▼',
    text: `${formatNumber(amount)}${unit}`,
    spoken: `${up ? 'up' : 'down'} ${formatNumber(amount)}${spokenUnit} from the previous period`,
    tone: good ? 'good' : 'bad',
  };
}

interface Props {
  websiteId: string;
  resolved: ResolvedRange;
  filters: Filter[];
  metric: ChartMetric;
  currency: string;
  /** The website's KPI goal (null: no KPI card) and the colour scheme of its card. */
  kpi: string | null;
  kpiColorScheme: string | null;
  onSelect: (metric: ChartMetric) => void;
}

interface GoalRow {
  goal: string | null;
  completions: number;
  visitors: number;
}

const KPI_SCHEMES = new Set(['red', 'orange', 'yellow', 'green', 'purple', 'pink', 'gray', 'blue', 'teal', 'indigo']);
/** Every goal row of a period (the breakdown's most), to find the KPI's among them. */
const GOAL_ROWS = 1000;
const KPI_CARD: Card = { key: 'visitors', label: 'KPI', kind: 'count' };

/** The KPI goal's completions and converting visitors in a period; null when it is not among the rows read. */
async function kpiFigures(query: Record<string, string | number | undefined>, kpi: string) {
  const rows = await list<GoalRow>('GET', '/api/v1/analytics/goals', { query: { ...query, limit: GOAL_ROWS } });
  const row = rows.find((candidate) => candidate.goal === kpi);
  if (row) return { completions: row.completions, visitors: row.visitors };
  return rows.length < GOAL_ROWS ? { completions: 0, visitors: 0 } : null;
}

/** The change of a KPI figure from the previous period, as the other tiles show it. */
function ChangeLine({ change, hasPrevious }: { change: Change | null; hasPrevious: boolean }) {
  return (
    <span class={`an-change an-${change?.tone ?? 'neutral'}`}>
      {change ? (
        <>
          <span aria-hidden="true">
            {change.symbol} {change.text}
          </span>
          <span class="an-sr">{change.spoken}</span>
        </>
      ) : hasPrevious ? (
        ' '
      ) : (
        <span class="an-muted">no comparison</span>
      )}
    </span>
  );
}

/**
 * The KPI's card, as the hosted service shows it: the goal's completions and its conversion rate
 * (visitors who completed it / visitors), tinted in the website's KPI colour scheme.
 */
function KpiTile(props: { websiteId: string; resolved: ResolvedRange; filters: Filter[]; kpi: string; scheme: string | null; now?: Overview }) {
  const { websiteId, resolved, filters, kpi, now } = props;
  const goals = useGoals();
  const look = goals.look(kpi);
  const current = readQuery(websiteId, resolved.range, filters);
  const previous = resolved.previous ? readQuery(websiteId, resolved.previous, filters) : null;
  const { data, error } = useFetch(
    () => Promise.all([kpiFigures(current, kpi), previous ? kpiFigures(previous, kpi) : null]),
    `${kpi}|${queryKey(current)}${previous ? queryKey(previous) : ''}`,
  );
  const [figures, earlier] = data ?? [undefined, null];
  const rate = (part: number | undefined, whole: number | undefined) => (part === undefined || !whole ? 0 : Math.round((part / whole) * 1000) / 10);
  const completions = figures?.completions;
  const conversion = figures && now ? rate(figures.visitors, now.visitors) : undefined;
  const change = completions !== undefined && earlier ? compare(KPI_CARD, completions, earlier.completions) : null;
  const name = goals.label(kpi);
  const scheme = props.scheme && KPI_SCHEMES.has(props.scheme) ? props.scheme : 'indigo';
  return (
    <li class="an-tile-item an-kpi-item">
      <div class={`an-tile an-kpi an-kpi-${scheme}`} title={goalTitle(kpi, look)}>
        <span class="an-tile-label">
          <span class="an-kpi-badge">KPI</span>
          <span>{name}</span>
        </span>
        {error ? (
          <span class="an-muted">Could not load the KPI: {error.message}</span>
        ) : (
          <>
            <span class="an-kpi-figure">
              <span class="an-tile-value" title={completions !== undefined ? formatExact(completions) : undefined}>
                {completions === undefined ? '–' : formatNumber(completions)}
              </span>
              <span class="an-kpi-unit">completion{completions === 1 ? '' : 's'}</span>
            </span>
            <span class="an-kpi-rate" title={`Conversion rate: visitors who completed ${name} / visitors`}>
              <strong>{conversion === undefined ? '–' : formatPercent(conversion)}</strong> conversion
            </span>
          </>
        )}
        <ChangeLine change={change} hasPrevious={!!resolved.previous} />
      </div>
    </li>
  );
}

/** The overview of a period, with the rate of the sample it was read from (events on ClickHouse, large ranges), if any. */
async function overviewOf(query: Record<string, string | number | undefined>): Promise<{ overview: Overview; sampleRate: number | null }> {
  const answer = await request<Overview>('GET', '/api/v1/analytics/overview', { query });
  const sampling = answer.sampling as { rate?: number } | undefined;
  return { overview: answer.data[0]!, sampleRate: sampling?.rate ?? null };
}

export function OverviewCards({ websiteId, resolved, filters, metric, currency, kpi, kpiColorScheme, onSelect }: Props) {
  const current = readQuery(websiteId, resolved.range, filters);
  const previous = resolved.previous ? readQuery(websiteId, resolved.previous, filters) : null;
  const { data, error, loading } = useFetch(
    () => Promise.all([overviewOf(current), previous ? overviewOf(previous) : null]),
    queryKey(current) + (previous ? queryKey(previous) : ''),
  );
  const now = data?.[0].overview;
  const before = data?.[1]?.overview ?? null;
  const sampleRate = data?.[0].sampleRate ?? null;
  const money = now?.currency ?? currency;
  const cards = CARDS.filter((card) => card.key !== 'revenue' || (now && (now.revenue !== 0 || (before?.revenue ?? 0) !== 0)));

  return (
    <section class="an-overview" aria-label="Overview" aria-busy={loading}>
      {error && (
        <p class="an-error" role="alert">
          Could not load the overview: {error.message}
        </p>
      )}
      {sampleRate !== null && (
        <p class="an-muted an-sampled" title="This large range is read from a sample of the visitors, and its counts scaled up.">
          Approximate: counted from a sample of {formatPercent(sampleRate * 100)} of visitors
        </p>
      )}
      <ul class={`an-tiles${loading ? ' an-loading' : ''}`}>
        {kpi && <KpiTile websiteId={websiteId} resolved={resolved} filters={filters} kpi={kpi} scheme={kpiColorScheme} now={now} />}
        {cards.map((card) => {
          const value = now?.[card.key];
          // A rate or a duration of a period without visitors is no baseline: nothing to compare.
          const comparable = before && (card.kind === 'count' || card.kind === 'money' || before.visitors > 0);
          const change = value !== undefined && comparable ? compare(card, value, before[card.key]) : null;
          const body = (
            <>
              <span class="an-tile-label">{card.label}</span>
              <span class="an-tile-value" title={value !== undefined && card.kind === 'count' ? formatExact(value) : undefined}>
                {value === undefined ? '–' : display(card, value, money)}
              </span>
              <ChangeLine change={change} hasPrevious={!!resolved.previous} />
            </>
          );
          return (
            <li key={card.key} class="an-tile-item">
              {card.chart ? (
                <button
                  type="button"
                  class={`an-tile an-tile-button${metric === card.chart ? ' an-selected' : ''}`}
                  aria-pressed={metric === card.chart}
                  title={`Show ${card.label.toLowerCase()} on the chart`}
                  onClick={() => onSelect(card.chart!)}
                >
                  {body}
                </button>
              ) : (
                <div class="an-tile">{body}</div>
              )}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
