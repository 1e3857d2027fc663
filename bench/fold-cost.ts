import { performance } from 'node:perf_hooks';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { createDatabase } from '../src/db/database.ts';
import { COLUMNS, eventRow } from '../src/db/event-columns.ts';
import type { RecordedEvent } from '../src/db/event-records.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { newId } from '../src/lib/ids.ts';
import { DERIVATIONS } from '../src/modules/analytics/derivations.ts';
import { lockWebsiteZones } from '../src/modules/analytics/rollups.ts';

// `node bin/run-ts.js bench/fold-cost.ts`: what each derivation's fold (src/modules/analytics/
// derivations.ts) costs per event on SQLite, measured in one process over the same batches, so
// a derivation's share of the fold holds on a busy machine where absolute times do not. Returning
// visitors (FOLD_VISITORS, default 5000, drawn skewed) in sessions of 4 pages, 5 % goals, at
// 300 events/s of simulated time; FOLD_EVENTS (default 30000) in batches of FOLD_BATCH (50).

const events = Number(process.env.FOLD_EVENTS || 30_000);
const batch = Number(process.env.FOLD_BATCH || 50);
const visitors = Number(process.env.FOLD_VISITORS || 5000);
const dir = mkdtempSync(join(tmpdir(), 'fold-cost-'));
const db = createDatabase(`sqlite:${join(dir, 'fold.db')}`);
try {
  await migrateToLatest(db);
  const websiteId = newId();
  const now = new Date().toISOString();
  await sql`insert into websites (id, domain, name, tracking_id, timezone, currency, revenue_metric, is_cookieless, include_renewal_revenue,
    allowed_hostnames, excluded_ips, excluded_paths, excluded_countries, excluded_hostnames, created_at, updated_at)
    values (${websiteId}, 'fold.example.com', 'Fold', ${newId()}, 'Europe/Paris', 'USD', 'revenue', 0, 1, '[]', '[]', '[]', '[]', '[]', ${now}, ${now})`.execute(db.kysely);

  // A website's stored funnels, whose crossings the fold keeps (funnel-crossings.ts): FOLD_FUNNELS
  // of them (default 1), each a common page, a rarer one and the goal.
  for (let f = 0; f < Number(process.env.FOLD_FUNNELS ?? 1); f += 1) {
    const steps = [{ id: newId(), name: 'a', type: 'pageview', url: `/p${f}` }, { id: newId(), name: 'b', type: 'pageview', url: `/p${f + 5}` }, { id: newId(), name: 'c', type: 'goal', goalName: 'signup' }];
    await db.kysely.insertInto('funnels').values({ id: newId(), website_id: websiteId, name: `F${f}`, slug: `f${f}`, steps: JSON.stringify(steps), is_active: true, created_at: now, updated_at: now }).execute();
  }

  let seed = 7;
  const next = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const pages = new Map<string, number>();
  const start = Date.now() - 2 * 86_400_000;
  const all: RecordedEvent[] = [];
  for (let i = 0; i < events; i += 1) {
    const visitor = `v${Math.floor(visitors * next() ** 2)}`;
    const page = (pages.get(visitor) ?? 0) + 1;
    pages.set(visitor, page);
    const goal = next() < 0.05;
    all.push({
      id: newId(), websiteId, visitorId: visitor, sessionId: `${visitor}-${Math.floor(page / 4)}`, type: goal ? 'custom' : 'pageview', name: goal ? 'signup' : null,
      hostname: 'fold.example.com', path: `/p${Math.floor(300 * next() ** 3)}`, referrer: null, country: ['US', 'FR', 'DE'][i % 3]!, browser: 'Chrome', os: 'Windows',
      device: 'desktop', metadata: null, source: 'browser', occurredAt: new Date(start + Math.floor((i * 1000) / 300)).toISOString(),
    });
  }
  const spent = new Map<string, number>(DERIVATIONS.map((d) => [d.name, 0]));
  for (let i = 0; i < all.length; i += batch) {
    const part = all.slice(i, i + batch);
    await db.kysely.transaction().execute(async (trx) => {
      for (const row of part) await trx.insertInto('events').values(Object.fromEntries(COLUMNS.map(([column], k) => [column, eventRow(row)[k]])) as never).execute();
      const zones = await lockWebsiteZones(trx, [websiteId]);
      for (const derivation of DERIVATIONS) {
        if (!derivation.fold) continue;
        const began = performance.now();
        await derivation.fold(trx, part, zones);
        spent.set(derivation.name, spent.get(derivation.name)! + performance.now() - began);
      }
    });
  }
  const total = [...spent.values()].reduce((a, b) => a + b, 0);
  console.log(`fold of ${events} events in batches of ${batch} (${visitors} visitors), SQLite:`);
  for (const [name, ms] of spent) console.log(`  ${name.padEnd(16)} ${((ms * 1000) / events).toFixed(1).padStart(7)} us/event  ${((100 * ms) / total).toFixed(1).padStart(5)} %`);
  console.log(`  ${'all'.padEnd(16)} ${((total * 1000) / events).toFixed(1).padStart(7)} us/event`);
} finally {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
}
