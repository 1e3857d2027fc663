// One report's rows as a table: the row's name (a button that adds its filter) over a bar sized by
// its visitors, and its numbers. The bar is decorative; the numbers are text.
import { formatExact, formatMoney, formatNumber, formatPercent } from './format.ts';
import { Swatch, useGoals } from './goal-display.tsx';
import type { Metric, Row, Tab } from './breakdown-config.ts';
import type { Filter } from './view-state.ts';

interface Props {
  tab: Tab;
  rows: Row[];
  metrics: Metric[];
  currency: string;
  caption: string;
  onFilter: (filters: Filter[]) => void;
  /** A second button after a row's name (a goal's "Properties"), when the row has a key. */
  rowAction?: { label: string; describe: (name: string) => string; run: (row: Row) => void };
}

function numberOf(row: Row, field: string): number {
  const value = row[field];
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

export function BreakdownTable({ tab, rows, metrics, currency, caption, onFilter, rowAction }: Props) {
  const barField = metrics[0]?.field ?? 'visitors';
  const max = rows.reduce((top, row) => Math.max(top, numberOf(row, barField)), 0);
  const goals = useGoals();
  const keys = rows.map((row) => tab.key(row, goals));
  const seen = new Map<string, number>();
  for (const key of keys) if (key) seen.set(key.text, (seen.get(key.text) ?? 0) + 1);
  return (
    <table class="an-table">
      <caption class="an-sr">{caption}</caption>
      <thead>
        <tr>
          <th scope="col" class="an-key-col">
            {tab.keyLabel}
          </th>
          {metrics.map((metric) => (
            <th key={metric.field} scope="col" class="an-num">
              {metric.label}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row, index) => {
          const key = keys[index] ?? null;
          const filters = key ? (tab.filter?.(row) ?? null) : null;
          const share = max > 0 ? (numberOf(row, barField) / max) * 100 : 0;
          const name = key ? ((seen.get(key.text) ?? 0) > 1 && key.full ? key.full : key.text) : (tab.unknownLabel ?? '(unknown)');
          const label = filters ? (
            <button type="button" class="an-key-button" title={`Filter: ${key?.title ?? name}`} onClick={() => onFilter(filters)}>
              {name}
            </button>
          ) : (
            <span class={key && !key.muted ? 'an-key-text' : 'an-key-text an-muted'} title={key?.title}>
              {name}
            </span>
          );
          return (
            <tr key={`${name}:${index}`}>
              <th scope="row" class="an-key">
                <span class="an-bar" style={{ width: `${share}%` }} aria-hidden="true" />
                <span class="an-key-inner">
                  {key?.image ? (
                    <img class="an-icon an-flag" src={key.image} alt="" width={16} height={12} loading="lazy" />
                  ) : (
                    key?.icon && (
                      <span class="an-icon" aria-hidden="true">
                        {key.icon}
                      </span>
                    )
                  )}
                  <Swatch color={key?.swatch} />
                  {key?.sub ? (
                    <span class="an-key-stack">
                      {label}
                      <span class="an-key-sub">{key.sub}</span>
                    </span>
                  ) : (
                    label
                  )}
                  {rowAction && key && (
                    <button type="button" class="an-link-button an-row-action" aria-haspopup="dialog" aria-label={rowAction.describe(name)} onClick={() => rowAction.run(row)}>
                      {rowAction.label}
                    </button>
                  )}
                </span>
              </th>
              {metrics.map((metric) => {
                const value = numberOf(row, metric.field);
                if (metric.percent) {
                  const rate = row[metric.field];
                  return (
                    <td key={metric.field} class="an-num">
                      {typeof rate === 'number' ? formatPercent(rate) : '–'}
                    </td>
                  );
                }
                return (
                  <td key={metric.field} class="an-num" title={metric.money ? undefined : formatExact(value)}>
                    {metric.money ? formatMoney(value, currency) : formatNumber(value)}
                  </td>
                );
              })}
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
