import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { RecordedEvent } from '../events/event.types.ts';
import { updateBreakdownRollups } from './breakdown-rollups.ts';
import { profileTotalsIn, profileTotalsOut, visitorsByWebsite } from './profile-totals.ts';
import { lockWebsiteZones, updateDailyRollups } from './rollups.ts';
import { updateSessions } from './session-rollup.ts';
import { splitByZone } from './visitor-zones.ts';
import { updateVisitorTotals } from './visitor-totals.ts';

/**
 * Folds stored events into every rollup the website API reads (days, sessions, visitor totals,
 * profiles, breakdowns), in the caller's transaction. Each event must be folded in exactly once:
 * the rollup deriver (rollup-backlog.ts) calls this for the events of the backlog and deletes
 * their rows in the same transaction. Takes the websites' row locks first. A website whose days
 * are moving to a new zone gets each visitor's days in that visitor's zone (visitor-zones.ts).
 */
export async function deriveRollups(trx: Kysely<Database>, events: RecordedEvent[]): Promise<void> {
  if (events.length === 0) return;
  const timezones = await lockWebsiteZones(trx, events.map((event) => event.websiteId));
  for (const part of await splitByZone(trx, events, timezones)) await deriveInZones(trx, part.events, part.zones);
}

async function deriveInZones(trx: Kysely<Database>, events: RecordedEvent[], zones: Map<string, string>): Promise<void> {
  await updateDailyRollups(trx, events, zones);
  // The batch's visitors leave their profiles' totals as they were and join them as updated.
  const visitors = visitorsByWebsite(events);
  for (const [websiteId, visitorIds] of visitors) await profileTotalsOut(trx, websiteId, visitorIds);
  // Before the breakdown rollups: breakdown_profiles follows the visitors' attributes as updated.
  await updateVisitorTotals(trx, events);
  await updateSessions(trx, events, zones);
  await updateBreakdownRollups(trx, events, zones);
  for (const [websiteId, visitorIds] of visitors) await profileTotalsIn(trx, websiteId, visitorIds);
}
