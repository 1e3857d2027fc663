import type { ReportDeps } from './report-scheduler.ts';
import { lastEndedHour } from './report-periods.ts';
import { type ReportWebsite, claimSpikeCheck, recordSpike } from './reports.repository.ts';

// The traffic-spike rule (README "Reports by mail"): once an hour, for the hour that just ended
// (UTC hours), the visitors of that hour against the usual for it, the median of the same hour on
// each of the 28 days before. It is a spike when the hour has at least SPIKE_MIN_VISITORS
// visitors and at least SPIKE_FACTOR times the usual (the usual counted as 1 at least, so a site
// with no traffic at that hour still needs the minimum). A website gets at most one spike mail
// in SPIKE_COOLDOWN_HOURS. One instance claims each hour's check (mail_spike_checks), so the
// read runs once per website per hour however many instances run.

export const USUAL_DAYS = 28;

export interface Spike {
  hourFrom: string;
  hourTo: string;
  visitors: number;
  usual: number;
}

export function median(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function isSpike(visitors: number, usual: number, rule: { spikeMinVisitors: number; spikeFactor: number }): boolean {
  return visitors >= rule.spikeMinVisitors && visitors >= rule.spikeFactor * Math.max(usual, 1);
}

/** The spike of the hour that ended last, or null (no spike, already checked, or in the cooldown). */
export async function checkTrafficSpike(deps: ReportDeps, website: ReportWebsite, now: Date): Promise<Spike | null> {
  const hour = lastEndedHour(now);
  const hourFrom = hour.from.toISOString();
  const { claimed, lastSpikeAt } = await claimSpikeCheck(deps.db, website.id, hourFrom);
  if (!claimed) return null;
  const cooldownMs = deps.settings.spikeCooldownHours * 3600_000;
  if (lastSpikeAt !== null && hour.to.getTime() - Date.parse(lastSpikeAt) < cooldownMs) return null;

  const spans = Array.from({ length: USUAL_DAYS + 1 }, (_, day) => ({
    id: day,
    from: new Date(hour.from.getTime() - day * 86_400_000).toISOString(),
    to: new Date(hour.to.getTime() - day * 86_400_000).toISOString(),
  }));
  const scope = { websiteId: website.id, range: { from: spans[USUAL_DAYS]!.from, to: hour.to.toISOString() }, timezone: website.timezone, filters: [] };
  const counts = await deps.stats.store.spanTraffic(scope, spans);
  const visitors = counts.get(0)?.visitors ?? 0;
  const usual = median(spans.slice(1).map((span) => counts.get(span.id)?.visitors ?? 0));
  if (!isSpike(visitors, usual, deps.settings)) return null;
  await recordSpike(deps.db, website.id, hour.to.toISOString());
  return { hourFrom, hourTo: hour.to.toISOString(), visitors, usual };
}
