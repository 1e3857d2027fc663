import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { RecordedEvent } from '../../db/event-records.ts';
import { DERIVATIONS, type Derivation, type VisitorsHook } from './derivations.ts';
import { visitorsByWebsite } from './profile-totals.ts';
import { lockWebsiteZones } from './rollups.ts';
import { splitByZone } from './visitor-zones.ts';

// The fold of new events into every derived table (the derivations' `fold` hooks, derivations.ts):
// what the rollup deriver (rollup-backlog.ts) and a build's chunks (derived-build.ts) run; the
// rest of the server reaches it through the maintainer (maintainer.ts).

/** Visitors leave (before) and join (after) the sums over their rows, around `apply`, by the derivations' hooks. */
export async function aroundVisitors(
  trx: Kysely<Database>,
  byWebsite: Map<string, string[]>,
  hooks: { leave: (d: Derivation) => VisitorsHook | undefined; join: (d: Derivation) => VisitorsHook | undefined },
  apply: () => Promise<void>,
): Promise<void> {
  for (const derivation of DERIVATIONS) {
    const leave = hooks.leave(derivation);
    if (leave) for (const [websiteId, visitorIds] of byWebsite) await leave(trx, websiteId, visitorIds);
  }
  await apply();
  for (const derivation of DERIVATIONS) {
    const join = hooks.join(derivation);
    if (join) for (const [websiteId, visitorIds] of byWebsite) await join(trx, websiteId, visitorIds);
  }
}

/**
 * Folds stored events into every derived table, in the caller's transaction. Each event must be
 * folded in exactly once: the rollup deriver (rollup-backlog.ts) calls this for the events of the
 * backlog and deletes their rows in the same transaction. Takes the websites' derived-data locks first. A
 * website whose days are moving to a new zone gets each visitor's days in that visitor's zone
 * (visitor-zones.ts).
 */
export async function foldEvents(trx: Kysely<Database>, events: RecordedEvent[]): Promise<void> {
  if (events.length === 0) return;
  const timezones = await lockWebsiteZones(trx, events.map((event) => event.websiteId));
  for (const part of await splitByZone(trx, events, timezones)) {
    await aroundVisitors(trx, visitorsByWebsite(part.events), { leave: (d) => d.leave, join: (d) => d.join }, async () => {
      for (const derivation of DERIVATIONS) await derivation.fold?.(trx, part.events, part.zones);
    });
  }
}
