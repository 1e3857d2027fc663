// The analytics page of one website (/websites/{id}): period, filters, overview numbers, the time
// series, the breakdown cards, funnels and the current visitors. The view is in the query string
// (view-state.ts), so the URL shares it; every analytics read sends `websiteId` and the filters.
import { api } from '../api.ts';
import { firstDayOfAllTime } from './all-time.ts';
import './analytics.css';
import './reports.css';
import { Breakdowns } from './Breakdowns.tsx';
import { DateRangePicker } from './DateRangePicker.tsx';
import { FilterBar } from './FilterBar.tsx';
import { SegmentBar } from './SegmentBar.tsx';
import { Funnels } from './Funnels.tsx';
import { GoalsProvider, useGoalCustomizations } from './goal-display.tsx';
import { OverviewCards } from './OverviewCards.tsx';
import { Realtime } from './Realtime.tsx';
import { TimeSeriesChart } from './TimeSeriesChart.tsx';
import { UnconvertedNotice } from './UnconvertedNotice.tsx';
import { resolveRange, todayIn } from './range.ts';
import { useFetch } from './use-fetch.ts';
import { type Filter, useViewState, withFilter } from './view-state.ts';

interface Metadata {
  domain: string;
  name: string;
  timezone: string;
  currency: string;
  /** The goal shown as the key metric, and its card's colour scheme (red, orange, ... indigo). */
  kpi?: string | null;
  kpiColorScheme?: string | null;
}

const browserZone = (): string => {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
};

export function AnalyticsPage(props: { websiteId: string; role?: 'owner' | 'member' | 'viewer' }) {
  const { websiteId, role } = props;
  const [view, update] = useViewState();
  const site = useFetch(() => api.get<Metadata>('/api/v1/analytics/metadata', { websiteId }), websiteId);
  // Goal display names, colours and descriptions: one read for every report of the page.
  const goals = useGoalCustomizations(websiteId);
  const timeZone = site.data?.timezone || browserZone();
  const today = todayIn(timeZone);
  // "All time" charts from its first day: the first visitor's or the first note's (all-time.ts).
  const probe = useFetch(
    site.data && view.period === 'all' ? () => firstDayOfAllTime(websiteId, timeZone, today) : null,
    `${websiteId}|${timeZone}|${today}|${view.period === 'all'}`,
  );

  if (site.error) {
    return (
      <div class="an-page">
        <p class="an-error" role="alert">
          Could not load this website: {site.error.message}
        </p>
        <button type="button" class="an-button" onClick={site.reload}>
          Try again
        </button>
      </div>
    );
  }
  if (!site.data) {
    return (
      <div class="an-page an-loading" aria-busy="true">
        <p class="an-empty">Loading analytics…</p>
      </div>
    );
  }

  const metadata = site.data;
  const currency = metadata.currency || 'USD';
  const firstDay = probe.data ?? null;
  // The chart and the funnel wait for the first day of "All time" (a failed probe: 12 months).
  const pending = view.period === 'all' && probe.loading;
  const resolved = resolveRange(view, timeZone, firstDay);
  const addFilters = (added: Filter[]) => update({ filters: added.reduce(withFilter, view.filters) });
  const shared = { websiteId, resolved, filters: view.filters };

  return (
    <GoalsProvider goals={goals}>
      <div class="an-page">
        <header class="an-header">
          <div class="an-title-block">
            {/* The app's website header names the website; this names the page's part for headings navigation. */}
            <h2 class="an-sr">Analytics of {metadata.domain || metadata.name || 'this website'}</h2>
            <Realtime websiteId={websiteId} filters={view.filters} />
          </div>
          <DateRangePicker view={view} resolved={resolved} today={today} timeZone={timeZone} onChange={update} />
        </header>
        <FilterBar websiteId={websiteId} resolved={resolved} filters={view.filters} onChange={update} />
        <SegmentBar websiteId={websiteId} resolved={resolved} filters={view.filters} canShare={role === 'owner' || role === 'member'} onChange={update} />
        <OverviewCards
          {...shared}
          metric={view.metric}
          currency={currency}
          kpi={metadata.kpi ?? null}
          kpiColorScheme={metadata.kpiColorScheme ?? null}
          onSelect={(metric) => update({ metric }, { replace: true })}
        />
        <UnconvertedNotice websiteId={websiteId} role={role} />
        <TimeSeriesChart
          {...shared}
          pending={pending}
          metric={view.metric}
          timeZone={timeZone}
          currency={currency}
          compare={view.compare}
          onCompare={(compare) => update({ compare }, { replace: true })}
          canWriteNotes={role === 'owner' || role === 'member'}
        />
        <Breakdowns {...shared} currency={currency} onFilter={addFilters}>
          <Funnels {...shared} pending={pending} />
        </Breakdowns>
      </div>
    </GoalsProvider>
  );
}
