// The website's funnels: pick one, see each step's visitors as a bar, the share of the first step
// that reached it, and the drop-off from the step before.
import { useState } from 'preact/hooks';
import { api, isSharedDashboard } from '../api.ts';
import { formatExact, formatNumber, formatPercent } from './format.ts';
import { Swatch, goalSubtext, goalTitle, useGoals } from './goal-display.tsx';
import { type ResolvedRange, queryKey, readQuery } from './range.ts';
import { useFetch } from './use-fetch.ts';
import type { Filter } from './view-state.ts';

interface FunnelDef {
  id: string;
  name: string;
  steps: { id: string; name: string; type: string; goalName?: string }[];
}

interface FunnelReport {
  funnelId: string;
  name: string;
  steps: { id: string; name: string; type: string; visitors: number; conversionRate: number; dropOff: number; revenue: number }[];
  visitors: number;
  conversionRate: number;
}

interface Props {
  websiteId: string;
  resolved: ResolvedRange;
  filters: Filter[];
  /** The range is not known yet (the first day of "All time" is being looked up). */
  pending?: boolean;
}

/** Goes to a page of the app without reloading (the app's router listens to popstate). */
function go(event: MouseEvent, href: string) {
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  history.pushState(null, '', href);
  window.dispatchEvent(new PopStateEvent('popstate', { state: null }));
  window.scrollTo(0, 0);
}

export function Funnels({ websiteId, resolved, filters, pending }: Props) {
  const list = useFetch(() => api.list<FunnelDef>(`/api/v1/admin/websites/${encodeURIComponent(websiteId)}/funnels`), websiteId);
  const [chosen, setChosen] = useState<string | null>(null);
  const funnels = list.data ?? [];
  const funnelId = funnels.some((funnel) => funnel.id === chosen) ? chosen : (funnels[0]?.id ?? null);
  // The report covers the view's days; "All time" sends the chart's first day (without days the
  // report would read the last 30 days).
  const query = readQuery(websiteId, resolved.chartRange, filters);
  const report = useFetch(
    funnelId && !pending ? () => api.get<FunnelReport>(`/api/v1/analytics/funnels/${encodeURIComponent(funnelId)}`, query) : null,
    `${funnelId}|${queryKey(query)}`,
  );
  const settings = `/websites/${encodeURIComponent(websiteId)}/settings?tab=funnels`;
  const first = report.data?.steps[0]?.visitors ?? 0;
  const goals = useGoals();
  const definition = funnels.find((funnel) => funnel.id === funnelId);
  /**
   * A goal step as its goal is customized: the display name when the step kept the goal's name
   * (a step named by hand keeps its name), the goal's colour, its raw name and description.
   */
  const stepLook = (step: { id: string; name: string; type: string }) => {
    const goalName = step.type === 'goal' ? definition?.steps.find((candidate) => candidate.id === step.id)?.goalName : undefined;
    const look = goalName ? goals.look(goalName) : null;
    if (!goalName || !look) return { name: step.name, color: null, sub: null, title: undefined };
    const renamed = step.name === goalName && look.displayName ? look.displayName : step.name;
    return { name: renamed, color: look.color, sub: renamed === goalName ? look.description : goalSubtext(look), title: goalTitle(goalName, look) };
  };

  return (
    <section class="an-card an-funnels" aria-labelledby="an-title-funnels">
      <div class="an-card-head">
        <h2 class="an-card-title" id="an-title-funnels">
          Funnels
        </h2>
        {funnels.length > 0 && (
          <label class="an-field an-inline">
            <span class="an-field-label">Funnel</span>
            <select value={funnelId ?? ''} onChange={(event) => setChosen((event.currentTarget as HTMLSelectElement).value)}>
              {funnels.map((funnel) => (
                <option key={funnel.id} value={funnel.id}>
                  {funnel.name}
                </option>
              ))}
            </select>
          </label>
        )}
      </div>
      <div class={`an-funnel-body${list.loading || report.loading ? ' an-loading' : ''}`} aria-busy={list.loading || report.loading}>
        {list.error ? (
          <p class="an-error" role="alert">
            Could not load the funnels: {list.error.message}
          </p>
        ) : !list.data ? (
          <p class="an-empty">Loading…</p>
        ) : funnels.length === 0 && isSharedDashboard() ? (
          <p class="an-empty">No funnels.</p>
        ) : funnels.length === 0 ? (
          <p class="an-empty">
            No funnels yet — <a href={settings} onClick={(event) => go(event, settings)}>create one in Settings</a>
          </p>
        ) : report.error ? (
          <p class="an-error" role="alert">
            Could not load the funnel: {report.error.message}
          </p>
        ) : !report.data ? (
          <p class="an-empty">Loading…</p>
        ) : (
          <>
            <p class="an-funnel-summary">
              {formatNumber(report.data.visitors)} visitor{report.data.visitors === 1 ? '' : 's'} entered ·{' '}
              {formatPercent(report.data.conversionRate)} completed the funnel · {resolved.label}
            </p>
            <table class="an-table an-funnel-table">
              <caption class="an-sr">Steps of the funnel {report.data.name}</caption>
              <thead>
                <tr>
                  <th scope="col" class="an-key-col">
                    Step
                  </th>
                  <th scope="col" class="an-num">
                    Visitors
                  </th>
                  <th scope="col" class="an-num" title="Share of the first step's visitors who reached this step">
                    Conversion
                  </th>
                  <th scope="col" class="an-num" title="Share of the previous step's visitors lost at this step">
                    Drop-off
                  </th>
                </tr>
              </thead>
              <tbody>
                {report.data.steps.map((step, index) => {
                  const shown = stepLook(step);
                  return (
                    <tr key={step.id}>
                      <th scope="row" class="an-key">
                        <span class="an-bar an-funnel-bar" style={{ width: `${first > 0 ? (step.visitors / first) * 100 : 0}%` }} aria-hidden="true" />
                        <span class="an-key-inner">
                          <span class="an-step-number" aria-hidden="true">
                            {index + 1}
                          </span>
                          <Swatch color={shown.color} />
                          {shown.sub ? (
                            <span class="an-key-stack" title={shown.title}>
                              <span class="an-key-text">{shown.name}</span>
                              <span class="an-key-sub">{shown.sub}</span>
                            </span>
                          ) : (
                            <span class="an-key-text" title={shown.title}>
                              {shown.name}
                            </span>
                          )}
                        </span>
                      </th>
                      <td class="an-num" title={formatExact(step.visitors)}>
                        {formatNumber(step.visitors)}
                      </td>
                      <td class="an-num">{formatPercent(step.conversionRate)}</td>
                      <td class="an-num">{index === 0 ? <span class="an-muted">—</span> : formatPercent(step.dropOff)}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </>
        )}
      </div>
    </section>
  );
}
