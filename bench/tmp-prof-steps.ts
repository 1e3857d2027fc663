import { sql } from 'kysely';
import { createDatabase } from '../src/db/database.ts';
import { engineOf } from '../src/db/engine.ts';
import { visitorsOffsets, countLastDays, visitorRowsOf, addDayRows } from '../src/modules/analytics/breakdown-days.ts';
import { moveVisitorEventDays } from '../src/modules/analytics/breakdown-rollups.ts';
import { moveVisitorSessionDays } from '../src/modules/analytics/session-breakdown-rollups.ts';
import { rebuildVisitorRollups } from '../src/modules/analytics/visitor-rollup-repair.ts';
import { deriveBacklog } from '../src/modules/analytics/rollup-backlog.ts';
import { EVENT_BREAKDOWNS } from '../src/modules/stats/sql/breakdown-keys-sql.ts';

const url = process.env.DBURL ?? 'sqlite:/work/scratch/move.db';
const opts = url.startsWith('postgres') ? { pgSchema: 'mb' } : {};
const db = createDatabase(url, opts);
const websiteId = (await db.kysely.selectFrom('websites').select('id').executeTakeFirstOrThrow()).id;
const visitors = (await sql<{ visitor_id: string }>`select visitor_id from visitor_totals where website_id = ${websiteId} order by visitor_id limit ${Number(process.env.N ?? 100)} offset 5000`.execute(db.kysely)).rows.map((r) => r.visitor_id);
const time = async (name: string, f: () => Promise<unknown>) => { const t0 = performance.now(); await f(); console.log(name, (performance.now() - t0).toFixed(1)); };
await db.kysely.transaction().execute(async (trx) => {
  await time('backlog', () => deriveBacklog(trx, websiteId));
  let from: any, to: any;
  await time('offsets', async () => { from = await visitorsOffsets(trx, websiteId, visitors, ['America/New_York']).then((x) => x[0]); to = await visitorsOffsets(trx, websiteId, visitors, ['Asia/Kolkata']).then((x) => x[0]); });
  await time('countLastDays', () => countLastDays(trx, visitorRowsOf(websiteId, visitors, EVENT_BREAKDOWNS), -1));
  await time('eventDays', () => moveVisitorEventDays(trx, websiteId, visitors, from, to));
  await time('sessionDays', () => moveVisitorSessionDays(trx, websiteId, visitors, from, to));
  await time('visitorRollups', () => rebuildVisitorRollups(trx, websiteId, 'Asia/Kolkata', visitors));
  await time('next', () => sql`select visitor_id from visitor_totals where website_id = ${websiteId} and visitor_id collate "C" > ${visitors[0]} order by visitor_id collate "C" limit 20`.execute(trx));
  await time('eventDays2', () => moveVisitorEventDays(trx, websiteId, visitors, from, to));
  throw new Error('rollback');
}).catch((e) => console.log(String(e)));
await db.close();
