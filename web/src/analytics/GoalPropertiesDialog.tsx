// The custom-property report of one goal (GET /analytics/goals/properties): completions and
// converting visitors per value of each property the goal was sent with, over the page's range and
// filters, grouped by property.
import { useRef } from 'preact/hooks';
import { request } from '../api.ts';
import type { Row, Tab } from './breakdown-config.ts';
import { formatExact, formatNumber } from './format.ts';
import { useGoals } from './goal-display.tsx';
import { type ResolvedRange, queryKey, readQuery } from './range.ts';
import { useFetch } from './use-fetch.ts';
import type { Filter } from './view-state.ts';
import { useModal } from '../components/useModal.ts';

interface PropertyRow {
  property: string;
  value: string | null;
  completions: number;
  visitors: number;
}

const ROWS = 1000;

/** The goals report's second button: the goal's custom-property report. */
export function propertiesAction(tab: Tab, open: (goal: string) => void) {
  if (tab.id !== 'goals') return undefined;
  return {
    label: 'Properties',
    describe: (name: string) => `Properties of ${name}`,
    run: (row: Row) => {
      if (typeof row.goal === 'string') open(row.goal);
    },
  };
}


interface Props {
  goal: string;
  websiteId: string;
  resolved: ResolvedRange;
  filters: Filter[];
  onClose: () => void;
}

export function GoalPropertiesDialog({ goal, websiteId, resolved, filters, onClose }: Props) {
  const dialog = useRef<HTMLDialogElement>(null);
  const goals = useGoals();
  const query = readQuery(websiteId, resolved.range, filters, { eventName: goal, limit: ROWS });
  const { data, error, loading } = useFetch(async () => {
    const answer = await request<PropertyRow>('GET', '/api/v1/analytics/goals/properties', { query });
    return { rows: answer.data, total: (answer.pagination as { total?: number } | undefined)?.total ?? answer.data.length };
  }, queryKey(query));

  useModal(dialog, onClose);

  const groups = new Map<string, PropertyRow[]>();
  for (const row of data?.rows ?? []) groups.set(row.property, [...(groups.get(row.property) ?? []), row]);
  const name = goals.label(goal);
  return (
    <dialog ref={dialog} class="an-dialog" aria-labelledby="an-goal-properties-title">
      <div class="an-dialog-head">
        <h2 id="an-goal-properties-title" class="an-card-title">
          Properties of {name}
        </h2>
        <button type="button" class="an-button an-close" onClick={() => dialog.current?.close()}>
          Close
        </button>
      </div>
      <p class="an-hint">
        {resolved.label}. The values the goal{name !== goal ? ` (${goal})` : ''} was sent with, by completions.
      </p>
      <div class={`an-dialog-body${loading ? ' an-loading' : ''}`} aria-busy={loading}>
        {error ? (
          <p class="an-error" role="alert">
            Could not load the properties: {error.message}
          </p>
        ) : !data ? (
          <p class="an-empty">Loading…</p>
        ) : groups.size === 0 ? (
          <p class="an-empty">This goal was completed without custom properties in this period.</p>
        ) : (
          [...groups].map(([property, rows]) => (
            <table key={property} class="an-table an-properties">
              <caption class="an-subheading">{property}</caption>
              <thead>
                <tr>
                  <th scope="col" class="an-key-col">
                    Value
                  </th>
                  <th scope="col" class="an-num">
                    Visitors
                  </th>
                  <th scope="col" class="an-num">
                    Completions
                  </th>
                </tr>
              </thead>
              <tbody>
                {rows.map((row, index) => (
                  <tr key={`${row.value}:${index}`}>
                    <th scope="row" class="an-key">
                      <span class="an-key-inner">
                        <span class={row.value === null ? 'an-key-text an-muted' : 'an-key-text'}>{row.value ?? '(none)'}</span>
                      </span>
                    </th>
                    <td class="an-num" title={formatExact(row.visitors)}>
                      {formatNumber(row.visitors)}
                    </td>
                    <td class="an-num" title={formatExact(row.completions)}>
                      {formatNumber(row.completions)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          ))
        )}
        {data && data.total > data.rows.length && <p class="an-hint">The first {formatExact(data.rows.length)} values of {formatExact(data.total)}.</p>}
      </div>
    </dialog>
  );
}
