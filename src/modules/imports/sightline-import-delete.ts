import { type Kysely, sql } from 'kysely';
import { lockWebsite } from '../../db/locks.ts';
import type { Database } from '../../db/schema.ts';
import { startBuild } from '../analytics/derived-build.ts';
import * as derivedData from '../analytics/maintainer.ts';
import * as deletes from '../events/server-deletes.repository.ts';
import { recountGoalStats } from '../goals/goal-stats.ts';
import type { JobRow } from '../integrations/integrations.repository.ts';
import { commitPage } from '../integrations/job-queue.ts';
import type { RunEnd } from './import-job.ts';
import type { SightlineRunContext } from './sightline-import-job.ts';
import type { Kind } from './sightline-import-rows.ts';

// Deleting an import of Sightline's own export: the rows it stored (import_raw_rows) are deleted a
// chunk at a time, with the chunk's rows of import_raw_rows, so a run that dies goes on with what
// is left: events with the goal statistics they counted in, and a build of the website's derived
// tables asked for (they are derived again from the events left, in the background, the reads
// answering from the raw events meanwhile); payments with the revenue they brought. Then the
// import itself. The settings it gave a fresh website stay. With ClickHouse the events are
// deleted there by mutations, a large chunk at a time, with the rollups and sessions of their days.

/** Rows deleted per transaction. */
const DELETE_ROWS = 500;
/** Events deleted per ClickHouse mutation (each rewrites the parts it touches: few and large). */
const CLICKHOUSE_DELETE_EVENTS = 20_000;
export const REBUILD_REASON = 'an import of a Sightline export was deleted';

const ORDER: Kind[] = ['event', 'payment', 'funnel', 'note', 'visitorProfile', 'goalCustomization', 'currencyRate'];

const nowIso = () => new Date().toISOString();

async function nextRows(db: Kysely<Database>, importId: string, kind: Kind, limit: number): Promise<string[]> {
  const rows = await db.selectFrom('import_raw_rows').select('row_id').where('import_id', '=', importId).where('kind', '=', kind).orderBy('row_id').limit(limit).execute();
  return rows.map((row) => row.row_id);
}

/**
 * The website's derived tables are built again from what is left (derived-build.ts), clearing all
 * of them first: events of any kind and session go, which the maintainer's repairs (made for
 * server goals) do not cover. Asked again by every chunk, so the build starts over after the last
 * one and never derives an event a later chunk deletes; meanwhile the reads use the raw events.
 */
async function rebuildWithout(trx: Kysely<Database>, websiteId: string): Promise<void> {
  await startBuild(trx, websiteId, REBUILD_REASON);
  await trx.updateTable('derived_builds').set({ phase: 'clear-all' }).where('website_id', '=', websiteId).execute();
}

async function deleteEventRows(trx: Kysely<Database>, websiteId: string, ids: string[]): Promise<void> {
  await rebuildWithout(trx, websiteId);
  const removed = await deletes.deleteEvents(trx, websiteId, ids);
  const goals = removed.filter((row) => row.name !== null);
  // The goal statistics are kept at ingestion, never built: recounted for the visitors that lost completions.
  if (goals.length > 0) {
    await recountGoalStats(trx, websiteId, [...new Set(goals.map((row) => row.name!))], [...new Set(goals.map((row) => row.visitor_id))]);
  }
}

async function deleteRows(trx: Kysely<Database>, websiteId: string, kind: Kind, ids: string[]): Promise<void> {
  switch (kind) {
    case 'event':
      return deleteEventRows(trx, websiteId, ids);
    case 'payment':
      await lockWebsite(trx, websiteId);
      await derivedData.uncountPayments(trx, sql`p.website_id = ${websiteId} and p.id in (${sql.join(ids)})`);
      await trx.deleteFrom('payments').where('website_id', '=', websiteId).where('id', 'in', ids).execute();
      return;
    case 'funnel':
      await trx.deleteFrom('funnels').where('website_id', '=', websiteId).where('id', 'in', ids).execute();
      return;
    case 'note':
      await trx.deleteFrom('notes').where('website_id', '=', websiteId).where('id', 'in', ids).execute();
      return;
    case 'visitorProfile':
      await trx.deleteFrom('visitor_profiles').where('website_id', '=', websiteId).where('visitor_id', 'in', ids).execute();
      return;
    case 'goalCustomization':
      await trx.deleteFrom('goal_customizations').where('website_id', '=', websiteId).where('goal_name', 'in', ids).execute();
      return;
    case 'currencyRate':
      await trx.deleteFrom('currency_rates').where('website_id', '=', websiteId).where('currency', 'in', ids).execute();
      return;
    default:
      return;
  }
}

export async function runSightlineDeleteJob(ctx: SightlineRunContext, job: JobRow): Promise<RunEnd> {
  const { db } = ctx;
  const importId = job.cursor ?? '';
  const target = await db.selectFrom('imports').select(['id', 'website_id']).where('id', '=', importId).executeTakeFirst();
  if (!target) {
    await commitPage(db, job, ctx.lease, { cursor: null, payments: 0 }, nowIso());
    return 'done';
  }
  for (const kind of ORDER) {
    for (;;) {
      if (ctx.stopping()) return 'stopped';
      const clickhouse = kind === 'event' && ctx.events.inClickHouse;
      const ids = await nextRows(db, importId, kind, clickhouse ? CLICKHOUSE_DELETE_EVENTS : DELETE_ROWS);
      if (ids.length === 0) break;
      // ClickHouse's events go first, outside the transaction (a run after a crash finds them gone).
      if (clickhouse) await ctx.events.deleteEvents(target.website_id, ids);
      const ok = await db.transaction().execute(async (trx) => {
        if (!clickhouse) await deleteRows(trx, target.website_id, kind, ids);
        await trx.deleteFrom('import_raw_rows').where('import_id', '=', importId).where('kind', '=', kind).where('row_id', 'in', ids).execute();
        return commitPage(trx, job, ctx.lease, { cursor: importId, payments: 0 }, nowIso());
      });
      if (!ok) return 'lost';
    }
  }
  if (!ctx.events.inClickHouse) ctx.events.rebuilding();
  const ok = await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('imports').where('id', '=', importId).execute();
    return commitPage(trx, job, ctx.lease, { cursor: null, payments: 0 }, nowIso());
  });
  return ok ? 'done' : 'lost';
}
