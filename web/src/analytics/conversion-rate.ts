// The conversion rate beside breakdown rows (docs/decisions.md, "Conversion rate per row"):
// - in the goals report, a goal's converting visitors / the visitors of the page's other filters;
// - in any other report while a goal filter is on, the row's visitors (who converted, since the
//   goal filter applies) / the same row's visitors without the goal filter.
// Both are read from the documented routes: the overview, and the same breakdown without the goal
// filter (its first 1000 rows; a row beyond them shows no rate).
import { api } from '../api.ts';
import { type Metric, type Row, type Tab, fetchBreakdown } from './breakdown-config.ts';
import { type DayRange, queryKey, readQuery } from './range.ts';
import { useFetch } from './use-fetch.ts';
import type { Filter } from './view-state.ts';

export const CONVERSION_RATE: Metric = { field: 'conversion_rate', label: 'Conv. rate', percent: true };

const BASE_ROWS = 1000;

/** A row's identity: its non-numeric fields (the key), so the same row matches in two answers. */
function identity(row: Row): string {
  return JSON.stringify(Object.entries(row).filter(([name, value]) => typeof value !== 'number' && name !== 'image'));
}

function percent(part: unknown, whole: number | undefined): number | null {
  if (typeof part !== 'number' || !whole) return null;
  return Math.round((part / whole) * 1000) / 10;
}

type Basis = { kind: 'total'; visitors: number } | { kind: 'rows'; visitors: Map<string, number> };

/** The rows with `conversion_rate` added, and the metric to show it; nothing when no rate applies. */
export function useConversionRates(tab: Tab, websiteId: string, range: DayRange | null, filters: Filter[], rows: Row[]): { rows: Row[]; metric: Metric | null } {
  const goalFilter = filters.find((filter) => filter.dimension === 'goal');
  const others = filters.filter((filter) => filter !== goalFilter);
  const mode = tab.id === 'goals' ? 'total' : goalFilter && goalFilter.operator === 'is' && tab.id !== 'exit-clicks' ? 'rows' : null;
  const query = readQuery(websiteId, range, others, mode === 'rows' ? { limit: BASE_ROWS } : { fields: 'visitors' });
  const basis = useFetch<Basis>(
    mode === null
      ? null
      : mode === 'total'
        ? async () => ({ kind: 'total', visitors: (await api.get<{ visitors: number }>('/api/v1/analytics/overview', query)).visitors })
        : async () => {
            const page = await fetchBreakdown(tab.endpoint, query);
            return { kind: 'rows', visitors: new Map(page.rows.map((row) => [identity(row), Number(row.visitors ?? 0)])) };
          },
    `${mode}|${tab.endpoint}|${queryKey(query)}`,
  );
  if (mode === null || !basis.data) return { rows, metric: null };
  const data = basis.data;
  return {
    rows: rows.map((row) => ({
      ...row,
      conversion_rate: data.kind === 'total' ? percent(row.visitors, data.visitors) : percent(row.visitors, data.visitors.get(identity(row))),
    })),
    metric: CONVERSION_RATE,
  };
}
