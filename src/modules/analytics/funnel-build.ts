import { type Kysely, sql } from 'kysely';
import { lockWebsiteRollups } from '../../db/locks.ts';
import type { Database } from '../../db/schema.ts';
import { matchedSteps } from './funnel-steps-match.ts';
import { type KeptFunnel, deriveFunnelVisitors, eachStepCondition } from './funnel-crossings.ts';

// The build of one stored funnel's rows (funnel_visitor_days, funnel_crossings) from the website's
// raw events, in the background, a chunk of visitors per short transaction: what a funnel created
// or given other steps on a website with events asks for (funnel-crossings.ts funnelsChanged,
// migration 0040), instead of waiting for the website's next whole build. The derived-data worker
// runs its chunks (derived-chunk.ts) when the website has no build nor move under way.
//
// A chunk takes the website's derived-data lock, finds the next visitors with step events past
// the cursor (the database's order of text), derives every day of theirs from their stored
// events (the one writer, funnel-crossings.ts), and moves the cursor. Meanwhile the fold, a
// delete's repair and a zone move keep the building funnel's rows for every visitor they touch,
// passed or not: each derives whole days again from the stored events and moves the sums by the
// difference, so a visitor derived twice (by the fold, then by a chunk, or the other way) ends
// the same. An event that commits between a chunk's statements (PostgreSQL's read committed) is
// either read by it or not; its backlog row still waits, and its fold derives that day again
// from the events table after the chunk commits: counted once either way (no sum here adds an
// event: every write replaces a visitor's days). Nor does a chunk fold the backlog in, so it
// cannot count a waiting event that a later fold counts again. When no visitor is left past the
// cursor, the funnel is kept (funnel_crossings_kept) and its reports read the sums.
//
// A website build (derived-build.ts) takes it over: its clear phase drops the funnels' builds
// and keeps every funnel. A change of steps starts it again; a delete drops it.

/**
 * One chunk of the website's oldest funnel build: up to `limit` visitors derived, in the caller's
 * transaction; `finished` once that funnel is kept (or no build is left).
 */
export async function funnelBuildChunk(trx: Kysely<Database>, websiteId: string, limit: number): Promise<{ finished: boolean; funnelId?: string }> {
  await lockWebsiteRollups(trx, websiteId);
  const build = await trx.selectFrom('funnel_builds').selectAll().where('website_id', '=', websiteId).orderBy('started_at').orderBy('funnel_id').limit(1).executeTakeFirst();
  if (!build) return { finished: true };
  const funnelId = build.funnel_id;
  const stored = await trx.selectFrom('funnels').select('steps').where('website_id', '=', websiteId).where('id', '=', funnelId).executeTakeFirst();
  const steps = stored && matchedSteps(JSON.parse(stored.steps) as { type: string; url?: string; goalName?: string }[]);
  if (!steps) {
    // Gone or no longer keepable (its steps' change drops the build itself): nothing to keep.
    await trx.deleteFrom('funnel_builds').where('website_id', '=', websiteId).where('funnel_id', '=', funnelId).execute();
    return { finished: true, funnelId };
  }
  const funnel: KeptFunnel = { id: funnelId, steps };
  const website = await trx.selectFrom('websites').select('timezone').where('id', '=', websiteId).executeTakeFirstOrThrow();
  const done = trx.updateTable('funnel_builds').where('website_id', '=', websiteId).where('funnel_id', '=', funnelId);
  if (build.visitors_total === null) await done.set({ visitors_total: await countVisitors(trx, websiteId, null, null) }).execute();
  const visitors = await nextStepVisitors(trx, websiteId, funnel, build.cursor, limit);
  if (visitors.length > 0) {
    await deriveFunnelVisitors(trx, websiteId, website.timezone, funnel, visitors);
    const passed = await countVisitors(trx, websiteId, build.cursor, visitors.at(-1)!);
    await done.set({ cursor: visitors.at(-1)!, visitors_done: Number(build.visitors_done) + passed }).execute();
  }
  if (visitors.length === limit) return { finished: false, funnelId };
  await trx.deleteFrom('funnel_builds').where('website_id', '=', websiteId).where('funnel_id', '=', funnelId).execute();
  await trx.insertInto('funnel_crossings_kept').values({ website_id: websiteId, funnel_id: funnelId }).execute();
  return { finished: true, funnelId };
}

/**
 * The next `limit` visitors past `cursor` with an event matching a step, in the database's order:
 * each step's own (a page step seeks its path's index in visitor order), merged and cut by the
 * database, so the order is the one the cursor compares with.
 */
async function nextStepVisitors(trx: Kysely<Database>, websiteId: string, funnel: KeptFunnel, cursor: string | null, limit: number): Promise<string[]> {
  const after = cursor === null ? sql`` : sql`and e.visitor_id > ${cursor}`;
  const perStep = eachStepCondition(funnel.steps).map(
    (matches) => sql`select * from (select distinct e.visitor_id from events e where e.website_id = ${websiteId} and ${matches} ${after} order by e.visitor_id limit ${limit}) s`,
  );
  const { rows } = await sql<{ visitor_id: string }>`select visitor_id from (${sql.join(perStep, sql` union `)}) v order by visitor_id limit ${limit}`.execute(trx);
  return rows.map((row) => row.visitor_id);
}

/**
 * The website's visitors (visitor_totals: a row per visitor with an event) after `after` up to
 * `upTo` (either end open when null): the build's progress is the share of them its cursor has
 * passed. A count of the visitors with step events instead took 2.5 s at a million events on
 * SQLite (every step event read, in the first chunk, holding the write gate); these are ranges of
 * visitor_totals' key, a chunk's own.
 */
async function countVisitors(trx: Kysely<Database>, websiteId: string, after: string | null, upTo: string | null): Promise<number> {
  let query = trx.selectFrom('visitor_totals').select((eb) => eb.fn.countAll<number | string>().as('n')).where('website_id', '=', websiteId);
  if (after !== null) query = query.where('visitor_id', '>', after);
  if (upTo !== null) query = query.where('visitor_id', '<=', upTo);
  return Number((await query.executeTakeFirstOrThrow()).n);
}

export interface FunnelBuildProgress {
  websiteId: string;
  funnelId: string;
  /** The website's visitors the build has passed (derived if they have step events). */
  visitorsDone: number;
  /** The website's visitors; null until its first chunk counts them. */
  visitorsTotal: number | null;
  startedAt: string;
}

/** The funnel builds under way (every website's, or one website's). */
export async function funnelBuildProgress(db: Kysely<Database>, websiteId?: string): Promise<FunnelBuildProgress[]> {
  let query = db.selectFrom('funnel_builds').selectAll().orderBy('started_at').orderBy('funnel_id');
  if (websiteId !== undefined) query = query.where('website_id', '=', websiteId);
  const rows = await query.execute();
  return rows.map((row) => ({
    websiteId: row.website_id,
    funnelId: row.funnel_id,
    visitorsDone: Number(row.visitors_done),
    visitorsTotal: row.visitors_total === null ? null : Number(row.visitors_total),
    startedAt: row.started_at,
  }));
}
