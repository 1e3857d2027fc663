import { sql } from 'kysely';
import { createDatabase } from '../src/db/database.ts';
const db = createDatabase('sqlite:/work/scratch/move.db');
const websiteId = (await db.kysely.selectFrom('websites').select('id').executeTakeFirstOrThrow()).id;
const visitors = (await sql<{ visitor_id: string }>`select visitor_id from visitor_totals where website_id = ${websiteId} order by visitor_id limit 20 offset 5000`.execute(db.kysely)).rows.map((r) => r.visitor_id);
const time = async (name: string, f: () => Promise<unknown>) => { const t0 = performance.now(); const r = await f(); console.log(name, (performance.now() - t0).toFixed(1)); return r; };
for (let i = 0; i < 2; i++) {
await time('stored', () => db.kysely.selectFrom('visitor_days').selectAll().where('website_id', '=', websiteId).where('visitor_id', 'in', visitors).execute());
await time('events', () => db.kysely.selectFrom('events').select(['id', 'occurred_at', 'visitor_id', 'session_id', 'type', 'name']).where('website_id', '=', websiteId).where('visitor_id', 'in', visitors).execute());
await time('minmax', () => sql`select min(occurred_at), max(occurred_at) from events indexed by events_website_visitor_idx where website_id = ${websiteId} and visitor_id in (${sql.join(visitors)})`.execute(db.kysely));
const days = (await sql<{day: string}>`select distinct day from visitor_days where website_id = ${websiteId} and visitor_id in (${sql.join(visitors)})`.execute(db.kysely)).rows.map(r => r.day);
await time('cleanupTotals', () => db.kysely.selectFrom('daily_totals').selectAll().where('website_id', '=', websiteId).where('day', 'in', days).where('visitors', '<=', 0).execute());
await time('cleanupRecency', () => db.kysely.selectFrom('visitor_recency').selectAll().where('website_id', '=', websiteId).where('day', 'in', days).where('visitors', '<=', 0).where('converted', '<=', 0).execute());
}
console.log(JSON.stringify((await sql`explain query plan select * from visitor_recency where website_id = ${websiteId} and day in ('2026-01-01','2026-01-02') and visitors <= 0 and converted <= 0`.execute(db.kysely)).rows.map((r: any) => r.detail)));
await db.close();
