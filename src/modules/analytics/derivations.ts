import type { Kysely, RawBuilder } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { RecordedEvent } from '../../db/event-records.ts';
import { movePaymentRevenue } from './breakdown-revenue.ts';
import { rebuildHourRollups, repairHourRollups } from './hour-rollup-repair.ts';
import { updateHourRollups } from './hour-rollups.ts';
import { joinProfiles, leaveProfiles } from './breakdown-profiles.ts';
import { moveVisitorEventDays, rebuildBreakdownRollups, repairBreakdownRollups, subtractDeletedEvents, updateBreakdownRollups } from './breakdown-rollups.ts';
import type { DerivedTableName } from './derived-tables.ts';
import type { WebsiteOffsets } from './local-day-sql.ts';
import { foldFunnelCrossings, rebuildFunnelCrossings, refreshFunnelVisitors } from './funnel-crossings.ts';
import { profileTotalsIn, profileTotalsOut, rebuildProfileTotals } from './profile-totals.ts';
import { rebuildDailyRollups } from './rollup-rebuild.ts';
import { updateDailyRollups } from './rollups.ts';
import { moveVisitorSessionDays } from './session-breakdown-rollups.ts';
import { rebuildSessions } from './session-rebuild.ts';
import { updateSessions } from './session-rollup.ts';
import { rebuildVisitorRollups, repairRollupsAfterDelete } from './visitor-rollup-repair.ts';
import { rebuildVisitorTotals, repairVisitorTotals, updateVisitorTotals } from './visitor-totals.ts';

// The code that keeps the derived tables (derived-tables.ts), declared once per unit: which
// tables each derivation keeps, and what it does for each kind of change. The maintainer
// (maintainer.ts) is the only caller: it runs, for a change, every derivation's hook of that kind
// in the order below (the rebuild in the order of the catalogue's `from`), so a writer never names
// a table, and a new derived table is one catalogue entry plus its derivation here; the catalogue
// test (test/derived-tables-catalogue.test.ts) fails while a table is left out of one.

/** Some visitors of one website. */
export type VisitorsHook = (trx: Kysely<Database>, websiteId: string, visitorIds: string[]) => Promise<void>;

/** Events of a website's visitors deleted (a server-goal delete), as the repairs see them. */
export interface DeletedEvents {
  websiteId: string;
  /** The deleted events, by the zone their visitors' days are in (two during a move). */
  byZone: Map<string, { visitorIds: string[]; events: { id: string; occurredAt: string }[] }>;
  /** Every visitor to repair. */
  visitorIds: string[];
  /** A move or a build runs: the other visitors' days stay as they are, so repair these visitors alone. */
  partial: boolean;
}

/** A chunk of a website's visitors whose local days move from one zone to another (day-relocation.ts). */
export interface ZoneMove {
  websiteId: string;
  visitorIds: string[];
  to: string;
  fromOffsets: WebsiteOffsets;
  toOffsets: WebsiteOffsets;
}

export interface Derivation {
  name: string;
  /** The derived tables it writes (each built table is kept by exactly one derivation). */
  keeps: readonly DerivedTableName[];
  /**
   * Sums over the rows of other tables per visitor: each changed visitor leaves them as they are
   * before any derivation applies a change, and joins them as they are after (folds and repairs).
   */
  leave?: VisitorsHook;
  join?: VisitorsHook;
  /** As leave and join, for a delete's repairs only (a fold moves these rows itself). */
  leaveForRepair?: VisitorsHook;
  joinForRepair?: VisitorsHook;
  /** New events folded in, each in its visitor's zone (`zones`: by website, or by visitor during a move). */
  fold?: (trx: Kysely<Database>, events: RecordedEvent[], zones: Map<string, string>) => Promise<void>;
  /** Before events are deleted, while they can still be read: what it must take out of them. */
  beforeDelete?: (trx: Kysely<Database>, deleted: DeletedEvents) => Promise<void>;
  /** After events were deleted: the visitors' rows derived again from the events they have left. */
  repair?: (trx: Kysely<Database>, deleted: DeletedEvents) => Promise<void>;
  /**
   * Payments that start (1) or stop (-1) counting: `payments` a condition over payments `p`, each
   * moved as its `counted` says (payment-counts.ts: the maintainer changes it between the two).
   */
  payments?: (trx: Kysely<Database>, payments: RawBuilder<unknown>, sign: 1 | -1) => Promise<void>;
  /** A chunk of visitors' local days moved to a new zone. */
  move?: (trx: Kysely<Database>, move: ZoneMove) => Promise<void>;
  /** Its tables derived again for the whole website from the raw data (the tests' oracle). */
  rebuild: (trx: Kysely<Database>, websiteId: string, timezone: string) => Promise<void>;
}

const eachZone = async (deleted: DeletedEvents, work: (zone: string, visitorIds: string[], events: { id: string; occurredAt: string }[]) => Promise<void>) => {
  for (const [zone, part] of deleted.byZone) await work(zone, part.visitorIds, part.events);
};

/** In fold order: visitor_totals before sessions (whose fold adds to its session columns) and before the breakdowns (whose profiles follow its attributes). */
export const DERIVATIONS: readonly Derivation[] = [
  {
    name: 'days',
    keeps: ['visitor_days', 'daily_totals', 'visitor_recency'],
    fold: updateDailyRollups,
    repair: (trx, deleted) =>
      eachZone(deleted, (zone, visitorIds) =>
        deleted.partial ? rebuildVisitorRollups(trx, deleted.websiteId, zone, visitorIds) : repairRollupsAfterDelete(trx, deleted.websiteId, zone, visitorIds),
      ),
    move: (trx, move) => rebuildVisitorRollups(trx, move.websiteId, move.to, move.visitorIds),
    rebuild: rebuildDailyRollups,
  },
  {
    // UTC hours: a change of zone moves nothing (no `move`).
    name: 'hours',
    keeps: ['visitor_hours', 'hour_totals', 'hour_recency'],
    fold: (trx, events) => updateHourRollups(trx, events),
    repair: (trx, deleted) => repairHourRollups(trx, deleted.websiteId, deleted.visitorIds),
    rebuild: (trx, websiteId) => rebuildHourRollups(trx, websiteId),
  },
  {
    name: 'visitor totals',
    keeps: ['visitor_totals'],
    fold: (trx, events) => updateVisitorTotals(trx, events),
    repair: (trx, deleted) => repairVisitorTotals(trx, deleted.websiteId, deleted.visitorIds),
    rebuild: (trx, websiteId) => rebuildVisitorTotals(trx, websiteId),
  },
  {
    name: 'sessions',
    // Server goals, the only events a delete takes, have no session: nothing to repair.
    keeps: ['sessions', 'session_buckets'],
    fold: updateSessions,
    rebuild: (trx, websiteId) => rebuildSessions(trx, websiteId),
  },
  {
    name: 'breakdowns',
    keeps: [
      'breakdown_visitors',
      'breakdown_totals',
      'breakdown_days',
      'breakdown_last_days',
      'breakdown_profile_days',
      'breakdown_profile_last_days',
      'breakdown_revenue',
      'breakdown_profiles',
      'breakdown_profile_revenue',
    ],
    leaveForRepair: leaveProfiles,
    joinForRepair: joinProfiles,
    fold: updateBreakdownRollups,
    beforeDelete: (trx, deleted) => eachZone(deleted, (zone, _visitors, events) => subtractDeletedEvents(trx, deleted.websiteId, zone, events)),
    repair: (trx, deleted) => eachZone(deleted, (zone, visitorIds) => repairBreakdownRollups(trx, deleted.websiteId, zone, visitorIds)),
    payments: movePaymentRevenue,
    move: async (trx, move) => {
      await moveVisitorEventDays(trx, move.websiteId, move.visitorIds, move.fromOffsets, move.toOffsets);
      await moveVisitorSessionDays(trx, move.websiteId, move.visitorIds, move.fromOffsets, move.toOffsets);
    },
    rebuild: (trx, websiteId) => rebuildBreakdownRollups(trx, websiteId),
  },
  {
    name: 'profile totals',
    keeps: ['profile_totals'],
    leave: profileTotalsOut,
    join: profileTotalsIn,
    rebuild: (trx, websiteId) => rebuildProfileTotals(trx, websiteId),
  },
  {
    // Each change derives the visitors' days again from their stored events, per stored funnel.
    name: 'funnels',
    keeps: ['funnel_visitor_days', 'funnel_crossings'],
    fold: foldFunnelCrossings,
    repair: (trx, deleted) => eachZone(deleted, (zone, visitorIds) => refreshFunnelVisitors(trx, deleted.websiteId, zone, visitorIds)),
    move: (trx, move) => refreshFunnelVisitors(trx, move.websiteId, move.to, move.visitorIds),
    rebuild: rebuildFunnelCrossings,
  },
];
