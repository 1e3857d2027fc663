// The breakdown reports, grouped in cards of tabs as Plausible does: which route each tab reads
// (website-api.md section 3), how a row is named, which filter a click on it adds, and its numbers.
import { request } from '../api.ts';
import { capitalise, countryName } from './format.ts';
import { type Goals, goalSubtext, goalTitle } from './goal-display.tsx';
import { type Dimension, type Filter, filterable } from './view-state.ts';

export type Row = Record<string, unknown>;

export interface RowKey {
  text: string;
  /** A symbol shown before the text (decorative). */
  icon?: string;
  /** An image shown instead of the icon (decorative): a country's flag served by this server. */
  image?: string;
  title?: string;
  /** Shown instead of `text` when two rows of a list have the same text (a path on two hosts). */
  full?: string;
  /** A colour shown as a small square before the text (decorative): a goal's colour. */
  swatch?: string;
  /** A second, smaller line under the text: a renamed goal's raw name and its description. */
  sub?: string;
  /** The row names what is not known (a region of a known country): shown muted, not filterable. */
  muted?: boolean;
}

export interface Metric {
  field: string;
  label: string;
  money?: boolean;
  /** A percentage (the conversion rate); null shows as a dash. */
  percent?: boolean;
}

export interface Tab {
  id: string;
  label: string;
  /** The route under /api/v1/analytics/. */
  endpoint: string;
  /** Column heading of the row names. */
  keyLabel: string;
  /** Caption of the table, for screen readers and the details dialog. */
  title: string;
  /** The row's name; `goals` carries the goal display names and colours of the page. */
  key: (row: Row, goals: Goals) => RowKey | null;
  /** The name of the row whose key is null; "(unknown)" when not given. */
  unknownLabel?: string;
  /** The filters a click on the row adds; null when the row cannot be filtered on. */
  filter?: (row: Row) => Filter[] | null;
  /** The numbers in the card; the first one sizes the bars. */
  metrics: Metric[];
  /** The numbers in the details dialog. */
  detailMetrics: Metric[];
}

export interface CardDef {
  id: string;
  title: string;
  tabs: Tab[];
}

const VISITORS: Metric = { field: 'visitors', label: 'Visitors' };
const PAGEVIEWS: Metric = { field: 'pageviews', label: 'Pageviews' };
const REVENUE: Metric = { field: 'revenue', label: 'Revenue', money: true };
const TRAFFIC = { metrics: [VISITORS], detailMetrics: [VISITORS, PAGEVIEWS, REVENUE] };

const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/** A row named by one field and filtered on one dimension with the same value. */
function simple(field: string, dimension: Dimension | null, show: (value: string) => string = (value) => value) {
  return {
    key: (row: Row): RowKey | null => {
      const value = text(row[field]);
      return value === null ? null : { text: show(value), title: value };
    },
    filter: (row: Row): Filter[] | null => {
      const value = text(row[field]);
      return dimension && filterable(value) ? [{ dimension, operator: 'is', values: [value] }] : null;
    },
  };
}

/**
 * The path of a flag the API links (`image`, under the server's PUBLIC_URL): the dashboard asks
 * its own origin for it, which the page's policy allows whatever name the server is reached by.
 * Flags are these SVGs, never emoji: Linux shows an emoji flag as an empty box, Windows as letters.
 */
function flagPath(image: unknown): string | undefined {
  if (typeof image !== 'string') return undefined;
  try {
    const { pathname } = new URL(image);
    return /^\/flags\/[a-z]{2}\.svg$/.test(pathname) ? pathname : undefined;
  } catch {
    return undefined;
  }
}

/** The flag Sightline serves for a country code (GET /flags/{cc}.svg), for rows with no `image`. */
export function servedFlag(code: string | null): string | undefined {
  return code && /^[A-Za-z]{2}$/.test(code) ? `/flags/${code.toLowerCase()}.svg` : undefined;
}

/**
 * A region or a city, with its country's flag. The API answers a row per region and country, so
 * visitors whose region is not known make one row per country: each is named by its country
 * ("Germany (region unknown)") rather than six rows of "(unknown)".
 */
function located(field: string, dimension: Dimension, noun: string) {
  const base = simple(field, dimension);
  return {
    ...base,
    key: (row: Row): RowKey | null => {
      const code = text(row.countryCode);
      const key = base.key(row);
      if (key) return { ...key, image: servedFlag(code), title: code ? `${key.title} (${countryName(code)})` : key.title };
      if (code === null) return null;
      const name = `${countryName(code)} (${noun} unknown)`;
      return { text: name, image: servedFlag(code), title: `Visitors from ${countryName(code)} whose ${noun} is not known`, muted: true };
    },
  };
}

const page = (dimension: Dimension) => ({
  key: (row: Row): RowKey | null => {
    const path = text(row.path);
    if (path === null) return null;
    const host = text(row.hostname);
    return { text: path, title: host ? `${host}${path}` : path, full: `${host ?? '(unknown host)'}${path}` };
  },
  filter: (row: Row): Filter[] | null => {
    const path = text(row.path);
    return filterable(path) ? [{ dimension, operator: 'is', values: [path] }] : null;
  },
});

const CAMPAIGN_PARTS = ['utm_source', 'utm_medium', 'utm_campaign'] as const;

const campaign = {
  key: (row: Row): RowKey | null => {
    const value = row.campaign as Record<string, string | null> | null;
    if (!value || CAMPAIGN_PARTS.every((part) => !value[part])) return null;
    const shown = CAMPAIGN_PARTS.map((part) => value[part] || '—').join(' / ');
    return { text: shown, title: CAMPAIGN_PARTS.map((part) => `${part}: ${value[part] || '(none)'}`).join(', ') };
  },
  filter: (row: Row): Filter[] | null => {
    const value = row.campaign as Record<string, string | null> | null;
    if (!value) return null;
    const filters: Filter[] = [];
    for (const part of CAMPAIGN_PARTS) {
      const partValue = value[part];
      if (partValue === null || partValue === undefined || partValue === '') continue;
      if (!filterable(partValue)) return null;
      filters.push({ dimension: part, operator: 'is', values: [partValue] });
    }
    return filters.length ? filters : null;
  },
};

export const CARDS: CardDef[] = [
  {
    id: 'sources',
    title: 'Top sources',
    tabs: [
      { id: 'referrers', label: 'Referrers', endpoint: 'referrers', keyLabel: 'Source', title: 'Referrers', ...simple('referrer', 'referrer'), ...TRAFFIC },
      {
        id: 'campaigns',
        label: 'Campaigns',
        endpoint: 'campaigns',
        keyLabel: 'utm_source / utm_medium / utm_campaign',
        title: 'Campaigns',
        unknownLabel: '(no campaign)',
        ...campaign,
        ...TRAFFIC,
      },
    ],
  },
  {
    id: 'pages',
    title: 'Top pages',
    tabs: [
      { id: 'pages', label: 'Top pages', endpoint: 'pages', keyLabel: 'Page', title: 'Top pages', ...page('page'), ...TRAFFIC },
      { id: 'entry', label: 'Entry pages', endpoint: 'entry-pages', keyLabel: 'Entry page', title: 'Entry pages', ...page('entry_page'), ...TRAFFIC },
      { id: 'exit', label: 'Exit pages', endpoint: 'exit-pages', keyLabel: 'Exit page', title: 'Exit pages (a click filters on visitors who viewed the page)', ...page('page'), ...TRAFFIC },
    ],
  },
  {
    id: 'locations',
    title: 'Locations',
    tabs: [
      {
        id: 'countries',
        label: 'Countries',
        endpoint: 'countries',
        keyLabel: 'Country',
        title: 'Countries',
        key: (row) => {
          const code = text(row.countryCode);
          const name = text(row.country) ?? (code ? countryName(code) : null);
          if (name === null) return null;
          return { text: name, image: flagPath(row.image) ?? servedFlag(code), title: code ? `${name} (${code})` : name };
        },
        filter: (row) => {
          const code = text(row.countryCode);
          return filterable(code) ? [{ dimension: 'country', operator: 'is', values: [code] }] : null;
        },
        ...TRAFFIC,
      },
      { id: 'regions', label: 'Regions', endpoint: 'regions', keyLabel: 'Region', title: 'Regions', ...located('region', 'region', 'region'), ...TRAFFIC },
      { id: 'cities', label: 'Cities', endpoint: 'cities', keyLabel: 'City', title: 'Cities', ...located('city', 'city', 'city'), ...TRAFFIC },
    ],
  },
  {
    id: 'devices',
    title: 'Devices',
    tabs: [
      { id: 'devices', label: 'Devices', endpoint: 'devices', keyLabel: 'Device', title: 'Devices', ...simple('device', 'device', capitalise), ...TRAFFIC },
      { id: 'browsers', label: 'Browsers', endpoint: 'browsers', keyLabel: 'Browser', title: 'Browsers', ...simple('browser', 'browser'), ...TRAFFIC },
      {
        id: 'os',
        label: 'Operating systems',
        endpoint: 'operating-systems',
        keyLabel: 'Operating system',
        title: 'Operating systems',
        ...simple('operating_system', 'os'),
        ...TRAFFIC,
      },
    ],
  },
  {
    id: 'goals',
    title: 'Goals',
    tabs: [
      {
        id: 'goals',
        label: 'Goals',
        endpoint: 'goals',
        keyLabel: 'Goal',
        title: 'Goal conversions',
        ...simple('goal', 'goal'),
        // The display name an owner gave the goal, its colour and description; the raw name stays
        // in the second line, the tooltip and the filter.
        key: (row, goals) => {
          const name = text(row.goal);
          if (name === null) return null;
          const look = goals.look(name);
          return { text: goals.label(name), title: goalTitle(name, look), swatch: look?.color ?? undefined, sub: goalSubtext(look) ?? undefined };
        },
        metrics: [VISITORS, { field: 'completions', label: 'Completions' }],
        detailMetrics: [VISITORS, { field: 'completions', label: 'Completions' }, REVENUE],
      },
      {
        id: 'exit-clicks',
        label: 'Exit clicks',
        endpoint: 'exit-clicks',
        keyLabel: 'Link',
        title: 'Clicks on external links',
        ...simple('url', null),
        metrics: [VISITORS, { field: 'clicks', label: 'Clicks' }],
        detailMetrics: [VISITORS, { field: 'clicks', label: 'Clicks' }],
      },
    ],
  },
];

export interface Page {
  rows: Row[];
  total: number;
}

/** One page of a breakdown, with `pagination.total`. */
export async function fetchBreakdown(endpoint: string, query: Record<string, string | number | undefined>): Promise<Page> {
  const answer = await request<Row>('GET', `/api/v1/analytics/${endpoint}`, { query });
  const pagination = answer.pagination as { total?: number } | undefined;
  return { rows: answer.data, total: pagination?.total ?? answer.data.length };
}
