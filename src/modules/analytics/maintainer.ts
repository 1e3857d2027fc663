import type { Kysely } from 'kysely';
import { freezeEventInserts, lockWebsiteRollups } from '../../db/locks.ts';
import type { Database } from '../../db/schema.ts';
import { dependencyOrder } from '../../lib/dependency-order.ts';
import { aroundVisitors, foldEvents } from './derive-rollups.ts';
import { DERIVATIONS, type DeletedEvents, type Derivation, type ZoneMove } from './derivations.ts';
import { buildScope } from './derived-build.ts';
import { funnelsChanged } from './funnel-crossings.ts';
import { DERIVED_TABLES } from './derived-tables.ts';
import { countAllAsRecorded, countPayments, uncountPayments } from './payment-counts.ts';
import { deriveBacklog, queueForRollups, queuePaymentsForRollups } from './rollup-backlog.ts';
import { visitorsByZone } from './visitor-zones.ts';

// The one way in to the derived data for whatever changes what it is derived from: new events
// (the rollup deriver, a build's chunks), deleted events (a server-goal delete), payments written
// (queued like events, counted by the fold: payment-counts.ts) or deleted, a chunk of a
// time-zone move, and the whole website derived again (the tests' oracle). Each runs the hooks the derivations declare (derivations.ts) in their order;
// writers outside this module call these and nothing else of it, in their own transaction.

/** In the transaction that stores events: they are to be folded in after the answer (rollup-backlog.ts). */
export const eventsRecorded = queueForRollups;

/** New events folded into every derived table (derive-rollups.ts), in the caller's transaction. */
export { foldEvents };

/** An event a delete takes: its id, visitor and instant. */
export interface DoomedEvent {
  id: string;
  visitorId: string;
  occurredAt: string;
}

/**
 * Deletes events of a website with `remove` (which answers the visitors of the rows it deleted)
 * and repairs every derived table, in the caller's transaction; `timezone` is the website's, read
 * under its lock. Waiting events are folded in first (the repairs re-derive the visitors from
 * their stored events, which would otherwise count them twice). While a build runs, only the
 * visitors it has derived whole have rows to repair; the others' chunks will read what is left of
 * their events (derived-build.ts). While the website's days move, each visitor's are repaired in
 * the zone they are in (visitor-zones.ts).
 */
export async function deleteEvents(trx: Kysely<Database>, websiteId: string, timezone: string, doomed: DoomedEvent[], remove: () => Promise<string[]>): Promise<void> {
  const { building, built } = await buildScope(trx, websiteId, doomed.map((event) => event.visitorId));
  const repaired = new Set(built);
  const inRollups = doomed.filter((event) => repaired.has(event.visitorId));
  const { moving, groups } = await visitorsByZone(trx, websiteId, timezone, inRollups.map((event) => event.visitorId));
  const byZone: DeletedEvents['byZone'] = new Map();
  for (const [zone, visitorIds] of groups) {
    const theirs = new Set(visitorIds);
    byZone.set(zone, { visitorIds, events: inRollups.filter((event) => theirs.has(event.visitorId)) });
  }
  const deleted: DeletedEvents = { websiteId, byZone, visitorIds: [], partial: moving || building };
  for (const derivation of DERIVATIONS) await derivation.beforeDelete?.(trx, deleted);
  const visitorIds = [...new Set(await remove())].filter((id) => repaired.has(id));
  if (visitorIds.length === 0) return;
  deleted.visitorIds = visitorIds;
  const byWebsite = new Map([[websiteId, visitorIds]]);
  await aroundVisitors(trx, byWebsite, { leave: (d) => d.leaveForRepair ?? d.leave, join: (d) => d.joinForRepair ?? d.join }, async () => {
    for (const derivation of DERIVATIONS) await derivation.repair?.(trx, deleted);
  });
}

/**
 * Settles the website's waiting events, under its lock, before a writer reads or rewrites what they
 * derive, and holds the website's event inserts to the end of the transaction (locks.ts), so that
 * every stored event the writer reads is derived.
 */
export async function settleWebsite(trx: Kysely<Database>, websiteId: string): Promise<number> {
  await lockWebsiteRollups(trx, websiteId);
  await freezeEventInserts(trx, websiteId);
  return deriveBacklog(trx, websiteId);
}

/**
 * In the short transaction that writes payments (inserted, refunded, given their conversion):
 * the fold is to bring them into the derived tables (rollup-backlog.ts). No derived-data lock.
 */
export const paymentsRecorded = queuePaymentsForRollups;

/**
 * The derived tables brought to these payments as they are now, in a transaction holding the
 * website's lock (an import's payments; the fold does the same for the backlog's).
 */
export { countPayments };

/** Before payments are deleted, in a transaction holding the website's lock: the derived tables let go of them. */
export { uncountPayments };

/** A chunk of a time-zone move: these visitors' local days go to the new zone (day-relocation.ts). */
export async function moveDays(trx: Kysely<Database>, move: ZoneMove): Promise<void> {
  for (const derivation of DERIVATIONS) await derivation.move?.(trx, move);
}

/** The derivations in the order a whole-website rebuild runs them: each after those keeping what its tables are derived from. */
export const REBUILD_ORDER: readonly Derivation[] = (() => {
  const keeper = new Map(DERIVATIONS.flatMap((derivation) => derivation.keeps.map((table) => [table as string, derivation])));
  const needs = (derivation: Derivation) =>
    DERIVED_TABLES.filter((table) => derivation.keeps.includes(table.name))
      .flatMap((table) => table.from)
      .map((source) => keeper.get(source))
      .filter((other): other is Derivation => other !== undefined && other !== derivation);
  return dependencyOrder(DERIVATIONS, needs, 'derivations.ts: the derivations');
})();

/** Every derived table the derivations keep, derived again for the whole website from its raw data, in the caller's transaction. */
export async function rebuildWebsite(trx: Kysely<Database>, websiteId: string, timezone: string): Promise<void> {
  await countAllAsRecorded(trx, websiteId);
  for (const derivation of REBUILD_ORDER) await derivation.rebuild(trx, websiteId, timezone);
}

/**
 * Stored funnels whose steps are new to the website (created, imported, or given other steps), in
 * the caller's transaction holding the website's lock: their crossings (funnel-crossings.ts) need
 * every step event the website already has, so each is built alone in the background
 * (funnel-build.ts), its reports read from the raw events until then; on a website without
 * events, kept at once. The caller wakes the derived-data worker after its commit (or its poll finds them).
 */
export const funnelStepsChanged = funnelsChanged;

/**
 * A stored funnel deleted (its build, if one runs, dropped) or revived (built again unless still
 * kept), in the caller's transaction holding the website's lock.
 */
export { funnelDeleted, funnelRevived } from './funnel-crossings.ts';
