import { type Kysely, sql } from 'kysely';
import { lockWebsiteRollups } from '../../db/locks.ts';
import type { Database, EventsTable } from '../../db/schema.ts';
import { chunks } from '../../lib/chunks.ts';
import { eventFromRow } from '../events/event-columns.ts';
import { deriveRollups } from './derive-rollups.ts';
import { BUILT_TABLES, type DerivedTable } from './derived-tables.ts';
import { deriveBacklog } from './rollup-backlog.ts';
import { inTimeOrder } from './time-order.ts';

// A build of a website's derived tables from its raw events, in the background, in short
// transactions: what a migration that adds a derived table asks for (src/db/migrations/
// derived-builds.ts), and what an operator's rebuild runs. It has two phases, each a row of
// derived_builds:
//
// - clear: the website's rows of the tables the rollup deriver keeps (derived-tables.ts
//   BUILT_TABLES) are deleted, CLEAR_ROWS at a time, the tables that others are summed from
//   first, so a payment or a profile change that adds to a sum through its visitor's rows
//   (breakdown revenue, breakdown profiles) adds only to rows that are deleted after. The tables
//   declared `replacedPerVisitor` (sessions, with session_buckets, and visitor_totals) stay: the
//   reads that have no other source keep answering from them. A migration that finds them
//   inconsistent (older than the table it adds) asks for 'clear-all', which clears them too.
// - derive: the website's visitors, in the database's order of their ids, a chunk per
//   transaction: their rows of the tables replaced per visitor are deleted, then all their events
//   are read from the events table and folded in by the rollup deriver itself (derive-rollups.ts),
//   in time order, into tables that hold nothing of theirs. Visitors up to the cursor are in the
//   tables; the deriver leaves out the waiting events of visitors past it (rollup-backlog.ts),
//   whose chunk will read them from the events table, and a goal delete repairs only visitors up
//   to it (events/event-log.ts). So every cleared table is always an exact sum over the visitors
//   up to the cursor, and the last chunk leaves every table exact.
//
// Reads do not use the rollups while a build runs (visitor-zones.ts `derivedDataBuilding`):
// they read the raw events and answer with X-Sightline-Derived-Data: rebuilding. The reads of
// sessions and of the visitor list meanwhile see each visitor not yet built as before the
// build, without the events that arrived since (docs/decisions.md).

/** Rows deleted per transaction in the clear phase. */
const CLEAR_ROWS = 2000;
/** Events folded in per call of the deriver. */
const EVENTS_PER_DERIVE = 500;
/** Visitor ids compared per statement. */
const VISITORS_PER_STATEMENT = 500;
/** The tables the clear phase deletes: every one the deriver keeps, or (a plain clear) all but those replaced per visitor. */
const CLEARED = {
  'clear-all': BUILT_TABLES,
  clear: BUILT_TABLES.filter((table) => !table.replacedPerVisitor),
};
/** The tables whose rows a chunk replaces for its visitors (session_buckets follows sessions by triggers). */
const REPLACED = ['sessions', 'visitor_totals'] as const;

/**
 * Starts (or starts again) a build of the website's derived tables, in the caller's transaction.
 * A move of its days to a new zone under way is dropped: the build derives every day in the
 * website's zone as it is at each chunk. A build that was clearing every table, those replaced
 * per visitor included, starts again doing so (session_buckets may not yet be cleared).
 */
export async function startBuild(trx: Kysely<Database>, websiteId: string, reason: string, now = new Date()): Promise<void> {
  await lockWebsiteRollups(trx, websiteId);
  await trx.deleteFrom('rollup_relocations').where('website_id', '=', websiteId).execute();
  const running = await trx.selectFrom('derived_builds').select('phase').where('website_id', '=', websiteId).executeTakeFirst();
  const phase = running?.phase === 'clear-all' ? ('clear-all' as const) : ('clear' as const);
  const fresh = { reason, phase, cursor: null, visitors_done: 0, events_done: 0, events_total: null, started_at: now.toISOString() };
  await trx
    .insertInto('derived_builds')
    .values({ website_id: websiteId, ...fresh })
    .onConflict((oc) => oc.column('website_id').doUpdateSet(fresh))
    .execute();
}

/**
 * Whether a build of the website runs, and the visitors among these whose rows it has derived
 * (all of them when none runs): the only ones a repair may re-derive, as the others' rows are not
 * there yet. Read under the website's row lock, so it holds until commit.
 */
export async function buildScope(db: Kysely<Database>, websiteId: string, visitorIds: string[]): Promise<{ building: boolean; built: string[] }> {
  const build = await db.selectFrom('derived_builds').select(['phase', 'cursor']).where('website_id', '=', websiteId).executeTakeFirst();
  if (!build) return { building: false, built: visitorIds };
  if (build.phase !== 'derive' || build.cursor === null || visitorIds.length === 0) return { building: true, built: [] };
  // Compared by the database, in the order its chunks follow.
  const built: string[] = [];
  for (const part of chunks([...new Set(visitorIds)], VISITORS_PER_STATEMENT)) {
    const { rows } = await sql<{ visitor_id: string }>`select v.visitor_id from (${sql.join(
      part.map((id) => sql`select ${id} as visitor_id`),
      sql` union all `,
    )}) v where v.visitor_id <= ${build.cursor}`.execute(db);
    built.push(...rows.map((row) => row.visitor_id));
  }
  return { building: true, built };
}

/** Deletes up to `limit` of the website's rows of one table (by its key); how many went. */
async function clearRows(trx: Kysely<Database>, table: DerivedTable, websiteId: string, limit: number): Promise<number> {
  const key = sql.join(table.groupBy.map((column) => sql.ref(column)));
  const result = await sql`delete from ${sql.table(table.name)} where website_id = ${websiteId} and (${key}) in (
    select ${key} from ${sql.table(table.name)} where website_id = ${websiteId} limit ${limit})`.execute(trx);
  return Number(result.numAffectedRows ?? 0);
}

/** The next visitors past the cursor, in the database's order of their ids. */
async function nextVisitors(trx: Kysely<Database>, websiteId: string, cursor: string | null, limit: number): Promise<string[]> {
  const after = cursor === null ? sql`` : sql`and visitor_id > ${cursor}`;
  const { rows } = await sql<{ visitor_id: string }>`select distinct visitor_id from events
    where website_id = ${websiteId} ${after} order by visitor_id limit ${limit}`.execute(trx);
  return rows.map((row) => row.visitor_id);
}

/** Every event of the visitors from just past `cursor` to `last`, in the order the deriver takes them (time, then id). */
async function eventsOf(trx: Kysely<Database>, websiteId: string, cursor: string | null, last: string) {
  const after = cursor === null ? sql`` : sql`and visitor_id > ${cursor}`;
  const { rows } = await sql<EventsTable>`select * from events where website_id = ${websiteId} ${after} and visitor_id <= ${last}`.execute(trx);
  return inTimeOrder(rows.map(eventFromRow), (event) => event.occurredAt);
}

export interface BuildChunkResult {
  /** Whether the website has no build left. */
  finished: boolean;
  /** The phase this chunk ran in; null when the website has no build. */
  phase: 'clear' | 'derive' | null;
}

/**
 * One step of the website's build, in one transaction of the caller's: up to CLEAR_ROWS rows
 * deleted, or the next `limit` visitors derived; the build ends once no visitor is left.
 */
export async function buildChunk(trx: Kysely<Database>, websiteId: string, limit: number): Promise<BuildChunkResult> {
  await lockWebsiteRollups(trx, websiteId);
  const build = await trx.selectFrom('derived_builds').selectAll().where('website_id', '=', websiteId).executeTakeFirst();
  if (!build) return { finished: true, phase: null };
  if (build.phase !== 'derive') {
    for (const table of CLEARED[build.phase]) {
      const deleted = await clearRows(trx, table, websiteId, CLEAR_ROWS);
      if (deleted > 0) return { finished: false, phase: 'clear' };
    }
    // The waiting events of the website go with the old rows: every one of them is read by its visitor's chunk.
    await deriveBacklog(trx, websiteId);
    const counted = await trx
      .selectFrom('events')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('website_id', '=', websiteId)
      .executeTakeFirstOrThrow();
    await trx.updateTable('derived_builds').set({ phase: 'derive', events_total: Number(counted.n) }).where('website_id', '=', websiteId).execute();
    return { finished: false, phase: 'clear' };
  }
  // The waiting events of visitors up to the cursor join first; the others' are read below.
  await deriveBacklog(trx, websiteId);
  const visitors = await nextVisitors(trx, websiteId, build.cursor, limit);
  if (visitors.length > 0) {
    const last = visitors.at(-1)!;
    const after = build.cursor === null ? sql`` : sql`and visitor_id > ${build.cursor}`;
    // Deleting sessions takes them out of session_buckets (triggers): the derive puts them back as derived.
    for (const table of REPLACED) await sql`delete from ${sql.table(table)} where website_id = ${websiteId} ${after} and visitor_id <= ${last}`.execute(trx);
    const events = await eventsOf(trx, websiteId, build.cursor, last);
    for (let i = 0; i < events.length; i += EVENTS_PER_DERIVE) await deriveRollups(trx, events.slice(i, i + EVENTS_PER_DERIVE));
    await trx
      .updateTable('derived_builds')
      .set({ cursor: last, visitors_done: Number(build.visitors_done) + visitors.length, events_done: Number(build.events_done) + events.length })
      .where('website_id', '=', websiteId)
      .execute();
  }
  if (visitors.length === limit) return { finished: false, phase: 'derive' };
  await trx.deleteFrom('derived_builds').where('website_id', '=', websiteId).execute();
  return { finished: true, phase: 'derive' };
}

export interface BuildProgress {
  websiteId: string;
  reason: string;
  phase: 'clear-all' | 'clear' | 'derive';
  visitorsDone: number;
  eventsDone: number;
  /** Null until the clear phase ends and the events are counted. */
  eventsTotal: number | null;
  startedAt: string;
}

/** The builds under way (every website's, or one website's). */
export async function buildProgress(db: Kysely<Database>, websiteId?: string): Promise<BuildProgress[]> {
  let query = db.selectFrom('derived_builds').selectAll();
  if (websiteId !== undefined) query = query.where('website_id', '=', websiteId);
  const rows = await query.execute();
  return rows.map((row) => ({
    websiteId: row.website_id,
    reason: row.reason,
    phase: row.phase,
    visitorsDone: Number(row.visitors_done),
    eventsDone: Number(row.events_done),
    eventsTotal: row.events_total === null ? null : Number(row.events_total),
    startedAt: row.started_at,
  }));
}
