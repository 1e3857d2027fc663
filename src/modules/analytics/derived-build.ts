import { type Kysely, type Selectable, sql } from 'kysely';
import { isPostgres } from '../../db/engine.ts';
import { lockWebsiteRollups } from '../../db/locks.ts';
import type { Database, DerivedBuildsTable, EventsTable } from '../../db/schema.ts';
import { chunks } from '../../lib/chunks.ts';
import { eventFromRow } from '../../db/event-columns.ts';
import { foldEvents } from './derive-rollups.ts';
import { BUILT_TABLES, type DerivedTable } from './derived-tables.ts';
import { keepEveryFunnel } from './funnel-crossings.ts';
import { deriveBacklog } from './rollup-backlog.ts';
import { inTimeOrder } from './time-order.ts';

// A build of a website's derived tables from its raw events, in the background, in short
// transactions: what a migration that adds a derived table asks for (src/db/migrations/
// derived-builds.ts), and what an operator's rebuild runs. It has two phases, each a row of
// derived_builds:
//
// - clear: the website's rows of the tables the rollup deriver keeps (derived-tables.ts
//   BUILT_TABLES) are deleted, a chunk of one table at a time (its rows the caller says), the tables that
//   others are summed from first, so a payment or a profile change that adds to a sum through its visitor's rows
//   (breakdown revenue, breakdown profiles) adds only to rows that are deleted after. The tables
//   declared `replacedPerVisitor` (sessions, with session_buckets, and visitor_totals) stay: the
//   reads that have no other source keep answering from them. A migration that finds them
//   inconsistent (older than the table it adds) asks for 'clear-all', which clears them too.
// - derive: the website's events in the database's order of (visitor id, instant, event id), a
//   chunk of events per transaction, so a chunk may stop inside a visitor with many events: no
//   transaction is longer than its share of events, whoever the visitors. A chunk first deletes the
//   rows of the tables replaced per visitor for the visitors it starts, then folds its events in
//   with the rollup deriver itself (derive-rollups.ts), in time order, into tables that hold
//   nothing of theirs but their earlier events. Events up to the cursor (the last event derived)
//   are in the tables; the deriver leaves out the waiting events past it (rollup-backlog.ts),
//   which a later chunk reads from the events table, and a goal delete repairs only visitors
//   wholly derived, after finishing the visitor the cursor stands in (buildScope). So every
//   cleared table is always an exact sum over the events up to the cursor, and the last chunk
//   leaves every table exact.
//
// Reads do not use the rollups while a build runs (visitor-zones.ts `derivedDataBuilding`):
// they read the raw events and answer with X-Sightline-Derived-Data: rebuilding. The reads of
// sessions and of the visitor list meanwhile see each visitor not yet built as before the
// build, without the events that arrived since (docs/decisions.md).

/** Rows deleted per transaction in the clear phase, unless the caller says. */
export const CLEAR_ROWS = 2000;
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
 * A move of its days to a new zone under way is dropped, and so are the builds of single funnels
 * (funnel-build.ts): the build derives every day of every funnel in the website's zone as it is at each chunk. A build that was clearing every table, those replaced
 * per visitor included, starts again doing so (session_buckets may not yet be cleared).
 */
export async function startBuild(trx: Kysely<Database>, websiteId: string, reason: string, now = new Date()): Promise<void> {
  await lockWebsiteRollups(trx, websiteId);
  await trx.deleteFrom('rollup_relocations').where('website_id', '=', websiteId).execute();
  // The funnels' own builds too: their rows go in the clear phase, which keeps every funnel (keepEveryFunnel).
  await trx.deleteFrom('funnel_builds').where('website_id', '=', websiteId).execute();
  const running = await trx.selectFrom('derived_builds').select('phase').where('website_id', '=', websiteId).executeTakeFirst();
  const phase = running?.phase === 'clear-all' ? ('clear-all' as const) : ('clear' as const);
  const fresh = { reason, phase, cursor: null, cursor_at: null, cursor_event_id: null, visitors_done: 0, events_done: 0, events_total: null, started_at: now.toISOString() };
  await trx
    .insertInto('derived_builds')
    .values({ website_id: websiteId, ...fresh })
    .onConflict((oc) => oc.column('website_id').doUpdateSet(fresh))
    .execute();
}

/** Where a build's derive phase stands: the last event derived (null before the first). */
type BuildCursor = { visitorId: string; at: string; eventId: string } | null;

const cursorOf = (build: Selectable<DerivedBuildsTable>): BuildCursor =>
  build.cursor === null || build.cursor_at === null || build.cursor_event_id === null ? null : { visitorId: build.cursor, at: build.cursor_at, eventId: build.cursor_event_id };

/** Events past the cursor, in its order (the database's, by the events' visitor index). */
const pastCursor = (cursor: BuildCursor) =>
  cursor === null ? sql`` : sql`and (visitor_id, occurred_at, id) > (${cursor.visitorId}, ${cursor.at}, ${cursor.eventId})`;

/**
 * Whether a build of the website runs, and the visitors among these whose rows it has derived
 * whole (all of them when none runs): the only ones a repair may re-derive, as the others' rows
 * are not there yet. The visitor the cursor stands in is derived to its end first, in the
 * caller's transaction, if it is among them. Read under the website's lock, so it holds
 * until commit.
 */
export async function buildScope(db: Kysely<Database>, websiteId: string, visitorIds: string[]): Promise<{ building: boolean; built: string[] }> {
  const build = await db.selectFrom('derived_builds').selectAll().where('website_id', '=', websiteId).executeTakeFirst();
  if (!build) return { building: false, built: visitorIds };
  const cursor = build.phase === 'derive' ? cursorOf(build) : null;
  if (cursor === null || visitorIds.length === 0) return { building: true, built: [] };
  if (visitorIds.includes(cursor.visitorId)) await finishVisitor(db, websiteId, build, cursor);
  // Compared by the database, in the order its chunks follow.
  const built: string[] = [];
  for (const part of chunks([...new Set(visitorIds)], VISITORS_PER_STATEMENT)) {
    const { rows } = await sql<{ visitor_id: string }>`select v.visitor_id from (${sql.join(
      part.map((id) => sql`select ${id} as visitor_id`),
      sql` union all `,
    )}) v where v.visitor_id <= ${cursor.visitorId}`.execute(db);
    built.push(...rows.map((row) => row.visitor_id));
  }
  return { building: true, built };
}

/** Derives the rest of the events of the visitor the cursor stands in, and moves the cursor to its last. */
async function finishVisitor(db: Kysely<Database>, websiteId: string, build: Selectable<DerivedBuildsTable>, cursor: NonNullable<BuildCursor>): Promise<void> {
  const { rows } = await sql<EventsTable>`select * from events where website_id = ${websiteId} and visitor_id = ${cursor.visitorId} ${pastCursor(cursor)}
    order by occurred_at, id`.execute(db);
  if (rows.length === 0) return;
  await derive(db, rows);
  await advance(db, websiteId, build, rows, 0);
}

/** Folds rows of the events table into the rollups in time order, EVENTS_PER_DERIVE at a time. */
async function derive(db: Kysely<Database>, rows: EventsTable[]): Promise<void> {
  const events = inTimeOrder(rows.map(eventFromRow), (event) => event.occurredAt);
  for (let i = 0; i < events.length; i += EVENTS_PER_DERIVE) await foldEvents(db, events.slice(i, i + EVENTS_PER_DERIVE));
}

/**
 * Moves the cursor to the last of `rows` (in the cursor's order, as the database returned them),
 * counting them and the `visitors` they began.
 */
async function advance(db: Kysely<Database>, websiteId: string, build: Selectable<DerivedBuildsTable>, rows: EventsTable[], visitors: number): Promise<void> {
  const last = rows.at(-1)!;
  // The instant is copied by the database, so it keeps its own type and precision.
  await sql`update derived_builds set cursor = ${last.visitor_id}, cursor_event_id = ${last.id},
    cursor_at = (select occurred_at from events where website_id = ${websiteId} and id = ${last.id}),
    visitors_done = ${Number(build.visitors_done) + visitors}, events_done = ${Number(build.events_done) + rows.length}
    where website_id = ${websiteId}`.execute(db);
}

/** Deletes up to `limit` of the website's rows of one table (by its key); how many went. */
async function clearRowsOf(trx: Kysely<Database>, table: DerivedTable, websiteId: string, limit: number): Promise<number> {
  const key = sql.join(table.groupBy.map((column) => sql.ref(column)));
  const result = await sql`delete from ${sql.table(table.name)} where website_id = ${websiteId} and (${key}) in (
    select ${key} from ${sql.table(table.name)} where website_id = ${websiteId} limit ${limit})`.execute(trx);
  return Number(result.numAffectedRows ?? 0);
}

/**
 * PostgreSQL plans each statement by its tables' statistics, which a build makes stale as it
 * fills the tables again: planned for tables of a few rows, the deriver's statements end up
 * scanning tables of millions (a build of a million events slowed to a hundred events a second).
 * Autovacuum catches up only a while after, if it is on. So a build refreshes them itself each
 * time its count of derived events passes a power of four (from 1,024): about a dozen times for
 * ten million events. SQLite's plans do not read statistics that were never gathered.
 */
async function refreshStatistics(trx: Kysely<Database>): Promise<void> {
  if (!isPostgres(trx)) return;
  await sql`analyze ${sql.join(BUILT_TABLES.map((table) => sql.table(table.name)))}`.execute(trx);
}

/**
 * After the clear phase, outside any transaction (the worker calls it): on PostgreSQL the rows it
 * deleted stay in the tables' files as dead rows until a vacuum, and every scan of the table
 * reads them (statements of 100 to 300 ms at the first chunks after clearing a million events'
 * rows, and 65 events a minute), so the cleared tables are vacuumed and analyzed. VACUUM takes no
 * lock that reads or writes wait for.
 */
export async function vacuumCleared(db: Kysely<Database>): Promise<void> {
  if (!isPostgres(db)) return;
  for (const table of BUILT_TABLES) await sql`vacuum (analyze) ${sql.table(table.name)}`.execute(db);
}

const crossesPowerOfFour = (before: number, added: number) => before + added >= 1024 && Math.floor(Math.log(before + added) / Math.log(4)) > Math.floor(Math.log(Math.max(before, 1)) / Math.log(4));

/**
 * The next `limit` events past the cursor, in its order, but those whose backlog rows wait: on
 * PostgreSQL an event may commit after the chunk folded the backlog in, and each statement sees
 * what committed before it. Such an event is left to the fold (if the chunk's cursor passes it) or
 * to a later chunk (the fold then drops its row), so it is counted once; the chunk goes on
 * without holding ingestion back (a time-zone move's chunk holds it instead: day-relocation.ts).
 */
async function nextEvents(trx: Kysely<Database>, websiteId: string, cursor: BuildCursor, limit: number): Promise<EventsTable[]> {
  const { rows } = await sql<EventsTable>`select * from events where website_id = ${websiteId} ${pastCursor(cursor)}
    and id not in (select event_id from rollup_backlog where website_id = ${websiteId} and event_id is not null)
    order by visitor_id, occurred_at, id limit ${limit}`.execute(trx);
  return rows;
}

export interface BuildChunkResult {
  /** Whether the website has no build left. */
  finished: boolean;
  /** The phase this chunk ran in; null when the website has no build. */
  phase: 'clear' | 'derive' | null;
  /** The table a chunk of the clear phase deleted rows of. */
  table?: string;
  /** The clear phase ended with this chunk: its tables are worth a vacuum (vacuumCleared). */
  cleared?: boolean;
}

/** Rows deleted per chunk of the clear phase: one count for every table, or one per table. */
export type ClearRows = number | ((table: string) => number);

/**
 * One step of the website's build, in one transaction of the caller's: up to `clearRows` rows
 * of a table deleted, or the next `limit` events derived; the build ends once no event is left.
 */
export async function buildChunk(trx: Kysely<Database>, websiteId: string, limit: number, clearRows: ClearRows = CLEAR_ROWS): Promise<BuildChunkResult> {
  await lockWebsiteRollups(trx, websiteId);
  const build = await trx.selectFrom('derived_builds').selectAll().where('website_id', '=', websiteId).executeTakeFirst();
  if (!build) return { finished: true, phase: null };
  if (build.phase !== 'derive') {
    for (const table of CLEARED[build.phase]) {
      const deleted = await clearRowsOf(trx, table, websiteId, typeof clearRows === 'number' ? clearRows : clearRows(table.name));
      if (deleted > 0) return { finished: false, phase: 'clear', table: table.name };
    }
    // Every funnel of the website is kept from here on: the chunks derive its rows with the others'.
    await keepEveryFunnel(trx, websiteId);
    // The waiting events of the website go with the old rows: every one of them is read by its visitor's chunk.
    await deriveBacklog(trx, websiteId);
    const counted = await trx
      .selectFrom('events')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('website_id', '=', websiteId)
      .executeTakeFirstOrThrow();
    await trx.updateTable('derived_builds').set({ phase: 'derive', events_total: Number(counted.n) }).where('website_id', '=', websiteId).execute();
    return { finished: false, phase: 'clear', cleared: true };
  }
  // The waiting events up to the cursor join first; the others' are read below.
  await deriveBacklog(trx, websiteId);
  const cursor = cursorOf(build);
  const rows = await nextEvents(trx, websiteId, cursor, limit);
  if (rows.length > 0) {
    // The rows the database returns are in the cursor's order: the last is the chunk's end.
    const last = rows.at(-1)!;
    const begun = cursor === null ? sql`` : sql`and visitor_id > ${cursor.visitorId}`;
    // The visitors this chunk starts lose their rows of the tables replaced per visitor (deleting
    // sessions takes them out of session_buckets, by triggers); the derive puts them back.
    for (const table of REPLACED) await sql`delete from ${sql.table(table)} where website_id = ${websiteId} ${begun} and visitor_id <= ${last.visitor_id}`.execute(trx);
    await derive(trx, rows);
    const begunVisitors = new Set(rows.map((row) => row.visitor_id));
    if (cursor !== null) begunVisitors.delete(cursor.visitorId);
    await advance(trx, websiteId, build, rows, begunVisitors.size);
    if (crossesPowerOfFour(Number(build.events_done), rows.length)) await refreshStatistics(trx);
  }
  if (rows.length === limit) return { finished: false, phase: 'derive' };
  // Visitors past the last event have no events left (deleted since their rows were derived).
  const end = rows.at(-1)?.visitor_id ?? cursor?.visitorId;
  const beyond = end === undefined ? sql`` : sql`and visitor_id > ${end}`;
  for (const table of REPLACED) await sql`delete from ${sql.table(table)} where website_id = ${websiteId} ${beyond}`.execute(trx);
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
