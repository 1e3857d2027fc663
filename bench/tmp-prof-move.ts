import { createDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { createAccountWithToken } from '../src/modules/account/account.service.ts';
import { seedSyntheticTraffic } from './timeseries.ts';
import { relocateChunk } from '../src/modules/analytics/day-relocation.ts';
import { existsSync } from 'node:fs';

const url = process.env.DBURL ?? 'sqlite:/work/scratch/move.db';
const fresh = process.env.FRESH === '1' || !existsSync('/work/scratch/move.db');
const opts = url.startsWith('postgres') ? { pgSchema: 'mb' } : {};
const db = createDatabase(url, opts);
await migrateToLatest(db);
let websiteId: string;
if (fresh) {
  await createAccountWithToken(db.kysely, 'p@example.com', 'P');
  websiteId = 'w'.repeat(24).slice(0, 24);
  const now = new Date().toISOString();
  await db.kysely.insertInto('websites').values({ id: websiteId, domain: 'x.example.com', name: 'x', timezone: 'America/New_York', tracking_id: 'trk', currency: 'USD', revenue_metric: 'revenue', is_cookieless: false, include_renewal_revenue: false, allowed_hostnames: '[]', excluded_ips: '[]', excluded_paths: '[]', excluded_countries: '[]', excluded_hostnames: '[]', created_at: now, updated_at: now } as never).execute();
  await db.close();
  await seedSyntheticTraffic({ engine: url.startsWith('postgres') ? 'postgres' : 'sqlite', url, ...opts, token: '', drop: async () => {} }, websiteId, Number(process.env.EVENTS ?? 100000));
} else {
  websiteId = (await db.kysely.selectFrom('websites').select('id').executeTakeFirstOrThrow()).id;
  await db.close();
}
const db2 = createDatabase(url, opts);
await db2.kysely.deleteFrom('rollup_relocations').execute();
await db2.kysely.insertInto('rollup_relocations').values({ website_id: websiteId, from_timezone: 'America/New_York', to_timezone: 'Asia/Kolkata', started_at: new Date().toISOString() }).execute();
const size = Number(process.env.SIZE ?? 200);
const t0 = performance.now();
let chunks = 0; let worst = 0;
for (;;) {
  const c0 = performance.now();
  const r = await db2.kysely.transaction().execute((trx) => relocateChunk(trx, websiteId, size));
  worst = Math.max(worst, performance.now() - c0);
  chunks++;
  if (r.finished) break;
}
console.log('move', ((performance.now() - t0) / 1000).toFixed(1), 's', chunks, 'chunks, worst', worst.toFixed(0), 'ms');
await db2.close();
