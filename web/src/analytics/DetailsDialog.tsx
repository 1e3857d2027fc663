// The whole list of one report in a native <dialog>, a page at a time (limit/offset, and the
// answer's pagination.total for the page count). Escape and the close button close it.
import { useRef, useState } from 'preact/hooks';
import { BreakdownTable } from './BreakdownTable.tsx';
import { type Tab, fetchBreakdown } from './breakdown-config.ts';
import { useConversionRates } from './conversion-rate.ts';
import { formatExact } from './format.ts';
import { propertiesAction } from './GoalPropertiesDialog.tsx';
import { type ResolvedRange, queryKey, readQuery } from './range.ts';
import { useFetch } from './use-fetch.ts';
import type { Filter } from './view-state.ts';
import { useModal } from '../components/useModal.ts';

const PAGE_SIZE = 50;

interface Props {
  tab: Tab;
  websiteId: string;
  resolved: ResolvedRange;
  filters: Filter[];
  currency: string;
  onFilter: (filters: Filter[]) => void;
  onClose: () => void;
  /** Opens a goal's property report (the goals report only). */
  onProperties?: (goal: string) => void;
}

export function DetailsDialog({ tab, websiteId, resolved, filters, currency, onFilter, onClose, onProperties }: Props) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [offset, setOffset] = useState(0);
  const query = readQuery(websiteId, resolved.range, filters, { limit: PAGE_SIZE, offset });
  const { data, error, loading } = useFetch(() => fetchBreakdown(tab.endpoint, query), `${tab.endpoint}|${queryKey(query)}`);
  const headingId = `an-details-${tab.id}`;

  useModal(dialog, onClose);

  const converted = useConversionRates(tab, websiteId, resolved.range, filters, data?.rows ?? []);
  const total = data?.total ?? 0;
  // Revenue only when this page of rows has some.
  const shown = tab.detailMetrics.filter((metric) => !metric.money || data?.rows.some((row) => Number(row[metric.field] ?? 0) !== 0));
  const metrics = converted.metric ? [...shown, converted.metric] : shown;
  const first = total === 0 ? 0 : offset + 1;
  const last = Math.min(offset + PAGE_SIZE, total);

  return (
    <dialog ref={dialog} class="an-dialog" aria-labelledby={headingId}>
      <div class="an-dialog-head">
        <h2 id={headingId} class="an-card-title">
          {tab.title}
        </h2>
        <button type="button" class="an-button an-close" onClick={() => dialog.current?.close()}>
          Close
        </button>
      </div>
      <p class="an-hint">{resolved.label}. Click a name to filter the whole page by it.</p>
      <div class={`an-dialog-body${loading ? ' an-loading' : ''}`} aria-busy={loading}>
        {error ? (
          <p class="an-error" role="alert">
            Could not load {tab.title.toLowerCase()}: {error.message}
          </p>
        ) : !data ? (
          <p class="an-empty">Loading…</p>
        ) : data.rows.length === 0 ? (
          <p class="an-empty">No data yet</p>
        ) : (
          <BreakdownTable
            tab={tab}
            rows={converted.rows}
            metrics={metrics}
            currency={currency}
            caption={tab.title}
            onFilter={onFilter}
            rowAction={onProperties ? propertiesAction(tab, onProperties) : undefined}
          />
        )}
      </div>
      <nav class="an-pager" aria-label="Pages">
        <button type="button" class="an-button" disabled={offset === 0 || loading} onClick={() => setOffset(Math.max(0, offset - PAGE_SIZE))}>
          Previous
        </button>
        <span aria-live="polite">
          {data ? `${formatExact(first)}–${formatExact(last)} of ${formatExact(total)}` : ''}
        </span>
        <button type="button" class="an-button" disabled={offset + PAGE_SIZE >= total || loading} onClick={() => setOffset(offset + PAGE_SIZE)}>
          Next
        </button>
      </nav>
    </dialog>
  );
}
