// The breakdown cards: each card has tabs (ARIA tabs, arrow keys move between them), shows the
// top 9 rows of the selected report, and a "Details" button that opens the whole list.
import type { ComponentChildren } from 'preact';
import { useRef, useState } from 'preact/hooks';
import { BreakdownTable } from './BreakdownTable.tsx';
import { CARDS, type CardDef, fetchBreakdown } from './breakdown-config.ts';
import { useConversionRates } from './conversion-rate.ts';
import { DetailsDialog } from './DetailsDialog.tsx';
import { GoalPropertiesDialog, propertiesAction } from './GoalPropertiesDialog.tsx';
import { type ResolvedRange, queryKey, readQuery } from './range.ts';
import { useFetch } from './use-fetch.ts';
import type { Filter } from './view-state.ts';

export const TOP_ROWS = 9;

interface Shared {
  websiteId: string;
  resolved: ResolvedRange;
  filters: Filter[];
  currency: string;
  onFilter: (filters: Filter[]) => void;
}

function BreakdownCard({ card, ...shared }: Shared & { card: CardDef }) {
  const [selected, setSelected] = useState(0);
  const [details, setDetails] = useState(false);
  const [propertiesOf, setPropertiesOf] = useState<string | null>(null);
  const tabRefs = useRef<(HTMLButtonElement | null)[]>([]);
  const tab = card.tabs[selected] ?? card.tabs[0]!;
  const query = readQuery(shared.websiteId, shared.resolved.range, shared.filters, { limit: TOP_ROWS });
  const { data, error, loading } = useFetch(() => fetchBreakdown(tab.endpoint, query), `${tab.endpoint}|${queryKey(query)}`);
  const panelId = `an-panel-${card.id}`;

  function onKey(event: KeyboardEvent) {
    const last = card.tabs.length - 1;
    let next = selected;
    if (event.key === 'ArrowRight') next = selected === last ? 0 : selected + 1;
    else if (event.key === 'ArrowLeft') next = selected === 0 ? last : selected - 1;
    else if (event.key === 'Home') next = 0;
    else if (event.key === 'End') next = last;
    else return;
    event.preventDefault();
    setSelected(next);
    tabRefs.current[next]?.focus();
  }

  const converted = useConversionRates(tab, shared.websiteId, shared.resolved.range, shared.filters, data?.rows ?? []);
  const rows = converted.rows;
  const metrics = converted.metric ? [...tab.metrics, converted.metric] : tab.metrics;
  return (
    <section class="an-card an-breakdown" aria-labelledby={`an-title-${card.id}`}>
      <div class="an-card-head">
        <h2 class="an-card-title" id={`an-title-${card.id}`}>
          {card.title}
        </h2>
        {card.tabs.length > 1 && (
          <div class="an-tabs" role="tablist" aria-label={`${card.title} reports`} onKeyDown={onKey}>
            {card.tabs.map((candidate, index) => (
              <button
                key={candidate.id}
                ref={(element) => {
                  tabRefs.current[index] = element;
                }}
                type="button"
                role="tab"
                id={`an-tab-${card.id}-${candidate.id}`}
                aria-selected={index === selected}
                aria-controls={panelId}
                tabIndex={index === selected ? 0 : -1}
                class={index === selected ? 'an-tab an-selected' : 'an-tab'}
                onClick={() => setSelected(index)}
              >
                {candidate.label}
              </button>
            ))}
          </div>
        )}
      </div>
      <div
        id={panelId}
        role={card.tabs.length > 1 ? 'tabpanel' : undefined}
        aria-labelledby={card.tabs.length > 1 ? `an-tab-${card.id}-${tab.id}` : undefined}
        aria-busy={loading}
        class={`an-breakdown-body${loading ? ' an-loading' : ''}`}
      >
        {error ? (
          <p class="an-error" role="alert">
            Could not load {tab.title.toLowerCase()}: {error.message}
          </p>
        ) : !data ? (
          <p class="an-empty">Loading…</p>
        ) : rows.length === 0 ? (
          <p class="an-empty">No data yet</p>
        ) : (
          <BreakdownTable
            tab={tab}
            rows={rows}
            metrics={metrics}
            currency={shared.currency}
            caption={tab.title}
            onFilter={shared.onFilter}
            rowAction={propertiesAction(tab, setPropertiesOf)}
          />
        )}
      </div>
      <div class="an-card-foot">
        {data && data.total > 0 && (
          <button type="button" class="an-link-button" aria-haspopup="dialog" onClick={() => setDetails(true)}>
            Details<span class="an-sr"> of {tab.title.toLowerCase()}</span>
            {data.total > TOP_ROWS ? ` (${data.total})` : ''}
          </button>
        )}
      </div>
      {details && (
        <DetailsDialog
          tab={tab}
          {...shared}
          onFilter={(filters) => {
            setDetails(false);
            shared.onFilter(filters);
          }}
          onClose={() => setDetails(false)}
          onProperties={setPropertiesOf}
        />
      )}
      {propertiesOf && <GoalPropertiesDialog goal={propertiesOf} {...shared} onClose={() => setPropertiesOf(null)} />}
    </section>
  );
}

/** The cards in a grid; `children` (the funnels) take the last cell. */
export function Breakdowns({ children, ...props }: Shared & { children?: ComponentChildren }) {
  return (
    <div class="an-grid">
      {CARDS.map((card) => (
        <BreakdownCard key={card.id} card={card} {...props} />
      ))}
      {children}
    </div>
  );
}
