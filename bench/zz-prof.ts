import { createDatabase } from '../src/db/database.ts';
import { profiledRevenue, profiledRows } from '../src/modules/stats/sql/breakdown-profile-reads.ts';
import { variedVisitors } from '../src/modules/stats/sql/steady-split-sql.ts';
import { breakdown } from '../src/modules/stats/sql/breakdowns-sql.ts';
const db = createDatabase(process.argv[2]!, process.argv[3] ? { pgSchema: process.argv[3] } : {});
const site = (await db.kysely.selectFrom('websites').select('id').executeTakeFirstOrThrow()).id;
const money = { currency: 'USD', includeRenewals: true };
const filters = [{ dimension: 'country', operator: 'is', values: ['US'] }, { dimension: 'device', operator: 'is', values: ['desktop'] }];
const scope = { websiteId: site, range: null, timezone: 'America/New_York', filters, wholeDays: 'all' } as never;
for (const kind of ['pages', 'entry-pages', 'countries']) {
  const t = { all: [] as number[], rev: [] as number[] };
  for (let i = 0; i < 7; i++) {
    let s = performance.now(); await breakdown(db.kysely, kind as never, scope, { limit: 10, offset: 0 }, money); t.all.push(performance.now() - s);
    s = performance.now(); await profiledRevenue(db.kysely, kind as never, scope, money); t.rev.push(performance.now() - s);
  }
  const med = (a: number[]) => a.sort((x, y) => x - y)[3]!.toFixed(1);
  console.log(kind, 'whole', med(t.all), 'steady revenue', med(t.rev));
}
void profiledRows; void variedVisitors;
await db.close();
