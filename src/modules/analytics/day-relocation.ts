import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../../db/engine.ts';
import { lockWebsiteRollups } from '../../db/locks.ts';
import type { Database } from '../../db/schema.ts';
import { startBuild } from './derived-build.ts';
import { relocationsOf } from './visitor-zones.ts';
import { visitorsOffsets } from './breakdown-days.ts';
import type { WebsiteOffsets } from './local-day-sql.ts';
import { moveDays, settleWebsite } from './maintainer.ts';

// A time-zone change moves the website's day rollups (visitor_days, daily_totals, visitor_recency,
// breakdown_days, breakdown_last_days and the last days of breakdown_visitors) to the new zone's
// local days. Every one of them is a function of each visitor's own events (or a sum of such), so
// the move goes a chunk of visitors at a time, in their ids' byte order, each chunk in its own
// short transaction: visitors up to the cursor have their days in the new zone, the others in the
// old one. Everything that writes day rollups meanwhile writes each visitor's in the zone of that
// visitor's side (`zoneOfVisitor`): the rollup deriver, and a delete's repair. So the tables are
// always exact sums over the visitors' days, each in one zone, and the chunk that reaches a
// visitor moves exactly what that visitor contributed. While the move runs, reads that would use
// these tables read the raw events instead (visitor-zones.ts `daysMoving`), and answer with
// X-Sightline-Derived-Data: rebuilding. The update that changes the zone only records the move.

export const DERIVED_DATA_HEADER = 'X-Sightline-Derived-Data';

/**
 * In the transaction of a website update that sets `timezone`, before the row is written: when the
 * zone changes, records the move of its day rollups (or, while one runs, the zone to move on to
 * once it ends). Nothing is moved here: the derived-data worker does it in the background.
 */
export async function startRelocation(trx: Kysely<Database>, websiteId: string, timezone: string, now = new Date()): Promise<void> {
  await lockWebsiteRollups(trx, websiteId);
  const website = await trx.selectFrom('websites').select('timezone').where('id', '=', websiteId).executeTakeFirst();
  if (!website || website.timezone === timezone) return;
  // A build under way has derived some visitors' days in the old zone: it starts again, in the new one.
  const build = await trx.selectFrom('derived_builds').select('reason').where('website_id', '=', websiteId).executeTakeFirst();
  if (build) {
    await startBuild(trx, websiteId, build.reason, now);
    return;
  }
  const running = (await relocationsOf(trx, [websiteId])).get(websiteId);
  if (running) {
    // The move under way ends in its `to` zone; from there, on to the latest zone asked for.
    const next = timezone === running.to ? null : timezone;
    await trx.updateTable('rollup_relocations').set({ next_timezone: next }).where('website_id', '=', websiteId).execute();
    return;
  }
  await trx
    .insertInto('rollup_relocations')
    .values({ website_id: websiteId, from_timezone: website.timezone, to_timezone: timezone, started_at: now.toISOString() })
    .execute();
}

/** The next visitors past the cursor, in byte order of their ids (every visitor with an event has a visitor_totals row). */
async function nextVisitors(trx: Kysely<Database>, websiteId: string, cursor: string | null, limit: number): Promise<string[]> {
  const id = isPostgres(trx) ? sql`visitor_id collate "C"` : sql`visitor_id`;
  const after = cursor === null ? sql`` : sql`and ${id} > ${cursor}`;
  const { rows } = await sql<{ visitor_id: string }>`select visitor_id from visitor_totals
    where website_id = ${websiteId} ${after} order by ${id} limit ${limit}`.execute(trx);
  return rows.map((row) => row.visitor_id);
}

export interface ChunkResult {
  /** Whether the website has no move left (this one ended and none was waiting). */
  finished: boolean;
}

/**
 * Moves the next `limit` visitors' days of the website to the new zone, in one transaction of the
 * caller's, and ends the move (or starts the waiting one) once none is left.
 */
export async function relocateChunk(trx: Kysely<Database>, websiteId: string, limit: number): Promise<ChunkResult> {
  await lockWebsiteRollups(trx, websiteId);
  const row = await trx.selectFrom('rollup_relocations').selectAll().where('website_id', '=', websiteId).executeTakeFirst();
  if (!row) return { finished: true };
  // The waiting events join first, each in its visitor's zone, and no other commits until this
  // chunk does: the moves below derive the visitors again from every stored event.
  await settleWebsite(trx, websiteId);
  if (row.visitors_total === null) {
    const counted = await trx
      .selectFrom('visitor_totals')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('website_id', '=', websiteId)
      .executeTakeFirstOrThrow();
    await trx.updateTable('rollup_relocations').set({ visitors_total: Number(counted.n) }).where('website_id', '=', websiteId).execute();
  }
  const visitors = await nextVisitors(trx, websiteId, row.cursor, limit);
  if (visitors.length > 0) {
    const [from, to] = (await visitorsOffsets(trx, websiteId, visitors, [row.from_timezone, row.to_timezone])) as [WebsiteOffsets, WebsiteOffsets];
    await moveDays(trx, { websiteId, visitorIds: visitors, to: row.to_timezone, fromOffsets: from, toOffsets: to });
    await trx
      .updateTable('rollup_relocations')
      .set({ cursor: visitors.at(-1)!, visitors_done: Number(row.visitors_done) + visitors.length })
      .where('website_id', '=', websiteId)
      .execute();
  }
  if (visitors.length === limit) return { finished: false };
  if (row.next_timezone !== null && row.next_timezone !== row.to_timezone) {
    await trx
      .updateTable('rollup_relocations')
      .set({ from_timezone: row.to_timezone, to_timezone: row.next_timezone, next_timezone: null, cursor: null, visitors_done: 0, visitors_total: null })
      .where('website_id', '=', websiteId)
      .execute();
    return { finished: false };
  }
  await trx.deleteFrom('rollup_relocations').where('website_id', '=', websiteId).execute();
  return { finished: true };
}

export interface RelocationProgress {
  websiteId: string;
  /** The zone the days are moving from, and to. */
  fromTimezone: string;
  toTimezone: string;
  /** A later change of zone, moved to once this move ends; null when none waits. */
  nextTimezone: string | null;
  visitorsDone: number;
  /** Null until the first chunk counts the website's visitors. */
  visitorsTotal: number | null;
  startedAt: string;
}

/** The moves under way (every website's, or one website's). */
export async function relocationProgress(db: Kysely<Database>, websiteId?: string): Promise<RelocationProgress[]> {
  let query = db
    .selectFrom('rollup_relocations')
    .select(['website_id', 'from_timezone', 'to_timezone', 'next_timezone', 'visitors_done', 'visitors_total', 'started_at']);
  if (websiteId !== undefined) query = query.where('website_id', '=', websiteId);
  const rows = await query.execute();
  return rows.map((row) => ({
    websiteId: row.website_id,
    fromTimezone: row.from_timezone,
    toTimezone: row.to_timezone,
    nextTimezone: row.next_timezone,
    visitorsDone: Number(row.visitors_done),
    visitorsTotal: row.visitors_total === null ? null : Number(row.visitors_total),
    startedAt: row.started_at,
  }));
}
