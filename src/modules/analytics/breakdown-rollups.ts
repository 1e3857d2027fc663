import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Engine } from '../../db/database.ts';
import { engineOf } from '../../db/engine.ts';
import type { Database } from '../../db/schema.ts';
import { chunks } from '../../lib/chunks.ts';
import { BREAKDOWN_SPECS } from '../stats/breakdown-specs.ts';
import { BREAKDOWNS } from '../stats/event-store.ts';
import { EVENT_KIND_CONDITION, EVENT_BREAKDOWNS, keyJson } from '../stats/sql/breakdown-keys-sql.ts';
import { ADD_TO_TOTALS, addKeyed, breakdownIn, deleteRows, deriveKeyed, keyedRows, snapshotKeyed } from './breakdown-rollup-tables.ts';
import { addKeyedToProfiles, rebuildBreakdownProfiles } from './breakdown-profiles.ts';
import { deriveSessionBreakdownRollups } from './session-breakdown-rollups.ts';

// Keeps the all-time event breakdowns (pages, countries, regions, cities, devices, browsers,
// operating systems, hostnames, goals, exit clicks) as rollups, so an unfiltered all-time
// breakdown reads one row per key instead of counting distinct visitors over every event:
// - breakdown_visitors: per visitor and key, that visitor's events and pageviews under it;
// - breakdown_totals: per key, its visitors (rows of breakdown_visitors), pageviews and events.
// Every write derives them from the raw events with set-based SQL, in the transaction that
// writes or deletes the events: ingestion adds a batch's events (two statements per batch,
// whatever its size), a goal delete re-derives the touched visitors, and a rebuild derives a
// whole website (migration 0013, the bench's bulk load). All-time counts do not depend on the
// time zone, so a time-zone change leaves them alone. The session breakdowns' rows share both
// tables (session-breakdown-rollups.ts); what both writers share is in breakdown-rollup-tables.ts.

/** What every rollup row and the event kinds' tests read, besides the keys' columns. */
const ROW_COLUMNS = ['website_id', 'visitor_id', 'type', 'name', 'link_url'];
/** The events' columns the rollups read (the CTE below is aliased `e`, as the key SQL expects). */
const READ_COLUMNS = [...new Set([...ROW_COLUMNS, ...EVENT_BREAKDOWNS.flatMap((kind) => Object.values(BREAKDOWN_SPECS[kind].keys))])];

/**
 * `with keyed as (...)`: per website, visitor, breakdown and key, the pageviews and events among
 * the events that `where` keeps (over the events table `e`).
 */
export function keyedEvents(engine: Engine, where: RawBuilder<unknown>): RawBuilder<unknown> {
  const branches = EVENT_BREAKDOWNS.map((kind) => {
    const only = BREAKDOWN_SPECS[kind].only;
    return sql`select e.website_id, e.visitor_id, ${sql.lit(kind)} as breakdown, ${keyJson(engine, kind)} as key,
        case when e.type = 'pageview' then 1 else 0 end as pageviews
      from scoped e${only ? sql` where ${EVENT_KIND_CONDITION[only]}` : sql``}`;
  });
  return keyedRows(sql`select ${sql.join(READ_COLUMNS.map((column) => sql.ref(column)))} from events e where ${where}`, branches);
}

/**
 * Adds the events `where` keeps to both tables (new visitor rows count as visitors of their key),
 * and, for ingestion, to breakdown_profiles (a delete's repair moves its visitors there itself).
 */
async function addEvents(db: Kysely<Database>, where: RawBuilder<unknown>, profiles: boolean): Promise<void> {
  const keyed = await snapshotKeyed(db, keyedEvents(engineOf(db), where));
  if (profiles) await addKeyedToProfiles(db, keyed);
  await addKeyed(db, keyed);
}

/** Events per statement: the id list is bound once (a CTE), well under both engines' parameter limits. */
const EVENTS_PER_STATEMENT = 500;
const VISITORS_PER_STATEMENT = 500;

/**
 * After a batch of events is inserted and visitor_totals updated, in its transaction (which holds
 * the websites' row locks).
 */
export async function updateBreakdownRollups(trx: Kysely<Database>, eventIds: string[]): Promise<void> {
  for (const ids of chunks(eventIds, EVENTS_PER_STATEMENT)) {
    await addEvents(trx, sql`e.id in (${sql.join(ids)})`, true);
  }
}

/** These visitors' rows of the event breakdowns (the session breakdowns follow the sessions). */
const eventRowsOf = (websiteId: string, visitorIds: string[]) =>
  sql`website_id = ${websiteId} and visitor_id in (${sql.join(visitorIds)}) and ${breakdownIn(EVENT_BREAKDOWNS)}`;

/** Takes these rows of breakdown_visitors out of the totals of their keys. */
async function subtractVisitorRows(db: Kysely<Database>, rows: RawBuilder<unknown>): Promise<void> {
  await sql`insert into breakdown_totals (website_id, breakdown, key, visitors, pageviews, events)
    select website_id, breakdown, key, -count(*), -sum(pageviews), -sum(events)
    from breakdown_visitors where ${rows}
    group by website_id, breakdown, key
    ${ADD_TO_TOTALS}`.execute(db);
}

/**
 * Re-derives these visitors' rows from their remaining events, after events of theirs were
 * deleted: their old rows leave the totals, new ones are derived and added back, and keys left
 * with no event go. Run it in the deleting transaction, under the website's row lock.
 */
export async function repairBreakdownRollups(db: Kysely<Database>, websiteId: string, visitorIds: string[]): Promise<void> {
  for (const chunk of chunks([...new Set(visitorIds)], VISITORS_PER_STATEMENT)) {
    const rows = eventRowsOf(websiteId, chunk);
    await subtractVisitorRows(db, rows);
    await sql`delete from breakdown_visitors where ${rows}`.execute(db);
    // With their rows gone, every key of theirs counts them as new visitors again.
    await addEvents(db, sql`e.website_id = ${websiteId} and e.visitor_id in (${sql.join(chunk)})`, false);
  }
  await sql`delete from breakdown_totals where website_id = ${websiteId} and events <= 0`.execute(db);
}

/**
 * Derives the event breakdowns' rows of both tables from every stored event of one website, or
 * of all of them, into tables holding none of those rows (one pass over the events): the
 * rebuild, and migration 0013's fill.
 */
export async function deriveBreakdownRollups<DB>(db: Kysely<DB>, engine: Engine, websiteId: string | null): Promise<void> {
  const website = websiteId === null ? sql`true` : sql`e.website_id = ${websiteId}`;
  await deriveKeyed(db, keyedEvents(engine, website), websiteId, EVENT_BREAKDOWNS);
}

/**
 * Replaces a website's rows with ones derived from all its events and sessions, and its
 * breakdown_profiles with ones derived from those rows (so rebuild visitor_totals first).
 */
export async function rebuildBreakdownRollups(db: Kysely<Database>, websiteId: string): Promise<void> {
  await deleteRows(db, websiteId, BREAKDOWNS);
  await deriveBreakdownRollups(db, engineOf(db), websiteId);
  await deriveSessionBreakdownRollups(db, engineOf(db), websiteId);
  await rebuildBreakdownProfiles(db, websiteId, BREAKDOWNS);
}
