// Values the filter editor suggests for a dimension: the top rows of the breakdown that reports it,
// over the page's range and its other filters (one read of 50 rows, made when the dimension is
// picked). Dimensions without a report of their own (ref, source, via) suggest nothing.
import { fetchBreakdown } from './breakdown-config.ts';
import { capitalise, countryName } from './format.ts';
import type { Goals } from './goal-display.tsx';
import { type ResolvedRange, readQuery } from './range.ts';
import { type Dimension, type Filter, filterable } from './view-state.ts';

export interface Suggestion {
  /** What the filter sends. */
  value: string;
  /** What the list shows beside it. */
  label: string;
}

type Row = Record<string, unknown>;

const CAMPAIGN_PARTS = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'] as const;

/** The report of each dimension and how a row gives its value. */
const SOURCES: Partial<Record<Dimension, { endpoint: string; value: (row: Row) => unknown; label?: (value: string, goals: Goals) => string }>> = {
  country: { endpoint: 'countries', value: (row) => row.countryCode, label: countryName },
  region: { endpoint: 'regions', value: (row) => row.region },
  city: { endpoint: 'cities', value: (row) => row.city },
  device: { endpoint: 'devices', value: (row) => row.device, label: capitalise },
  browser: { endpoint: 'browsers', value: (row) => row.browser },
  os: { endpoint: 'operating-systems', value: (row) => row.operating_system },
  referrer: { endpoint: 'referrers', value: (row) => row.referrer },
  page: { endpoint: 'pages', value: (row) => row.path },
  entry_page: { endpoint: 'entry-pages', value: (row) => row.path },
  hostname: { endpoint: 'hostnames', value: (row) => row.hostname },
  goal: { endpoint: 'goals', value: (row) => row.goal, label: (value, goals) => goals.label(value) },
  ...Object.fromEntries(
    CAMPAIGN_PARTS.map((part) => [part, { endpoint: 'campaigns', value: (row: Row) => (row.campaign as Record<string, unknown> | null)?.[part] }]),
  ),
};

export function suggestsValues(dimension: Dimension): boolean {
  return dimension in SOURCES;
}

export async function fetchSuggestions(
  dimension: Dimension,
  websiteId: string,
  resolved: ResolvedRange,
  filters: Filter[],
  goals: Goals,
): Promise<Suggestion[]> {
  const source = SOURCES[dimension];
  if (!source) return [];
  // The suggestions are not narrowed by the filter being edited.
  const others = filters.filter((filter) => filter.dimension !== dimension);
  const { rows } = await fetchBreakdown(source.endpoint, readQuery(websiteId, resolved.range, others, { limit: 50 }));
  const seen = new Set<string>();
  const out: Suggestion[] = [];
  for (const row of rows) {
    const value = source.value(row);
    if (!filterable(value as string | null) || seen.has(value as string)) continue;
    seen.add(value as string);
    out.push({ value: value as string, label: source.label ? source.label(value as string, goals) : (value as string) });
  }
  return out;
}
