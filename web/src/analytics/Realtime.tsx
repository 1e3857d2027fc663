// "N current visitors": visitors with an event in the last 5 minutes, read every 30 seconds while
// the tab is visible (and at once when it becomes visible again). A polite live region, in a
// button that opens the live view (LiveDialog.tsx, its own chunk, loaded on first open).
import { useEffect, useState } from 'preact/hooks';
import { api, isSharedDashboard } from '../api.ts';
import { lazyComponent } from '../lazy.tsx';
import { formatNumber } from './format.ts';
import './realtime.css';
import { filterQuery, type Filter } from './view-state.ts';

const EVERY_MS = 30_000;

const LiveDialog = lazyComponent<{ websiteId: string; filtered: boolean; onClose: () => void }>(() => import('./LiveDialog.tsx').then((module) => module.LiveDialog));

export function Realtime({ websiteId, filters }: { websiteId: string; filters: Filter[] }) {
  const [visitors, setVisitors] = useState<number | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  const [open, setOpen] = useState(false);
  const filterKey = JSON.stringify(filters);

  useEffect(() => {
    let alive = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const query = { websiteId, ...filterQuery(filters) };
    const schedule = () => {
      clearTimeout(timer);
      if (document.visibilityState === 'visible') timer = setTimeout(read, EVERY_MS);
    };
    async function read() {
      try {
        const answer = await api.get<{ visitors: number }>('/api/v1/analytics/realtime', query);
        if (!alive) return;
        setVisitors(answer?.visitors ?? 0);
        setFailed(null);
      } catch (error) {
        if (alive) setFailed(error instanceof Error ? error.message : String(error));
      }
      if (alive) schedule();
    }
    const onVisibility = () => {
      if (document.visibilityState === 'visible') void read();
      else clearTimeout(timer);
    };
    void read();
    document.addEventListener('visibilitychange', onVisibility);
    return () => {
      alive = false;
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisibility);
    };
  }, [websiteId, filterKey]);

  const label =
    visitors === null ? (failed ? `Current visitors unavailable: ${failed}` : 'Counting current visitors…') : `${formatNumber(visitors)} current visitor${visitors === 1 ? '' : 's'}`;
  // A shared dashboard has no live view: it would show single visitors.
  if (isSharedDashboard()) {
    return (
      <p class="an-realtime" title="Visitors with activity in the last 5 minutes">
        <span class={`an-pulse${visitors ? ' an-live' : ''}`} aria-hidden="true" />
        <span aria-live="polite" aria-atomic="true">
          {label}
        </span>
      </p>
    );
  }
  return (
    <>
      <p class="an-realtime" title="Visitors with activity in the last 5 minutes">
        <span class={`an-pulse${visitors ? ' an-live' : ''}`} aria-hidden="true" />
        <button type="button" class="an-live-open" aria-haspopup="dialog" onClick={() => setOpen(true)}>
          <span aria-live="polite" aria-atomic="true">
            {label}
          </span>
          <span class="an-live-cta">Live view</span>
        </button>
        {failed && visitors !== null && <span class="an-sr"> (last update failed: {failed})</span>}
      </p>
      {open && <LiveDialog websiteId={websiteId} filtered={filters.length > 0} onClose={() => setOpen(false)} />}
    </>
  );
}
