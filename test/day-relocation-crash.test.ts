import { describe, expect, it } from 'vitest';
import { type CrashStore, describePostgres, useCrashStores } from './helpers/crash-stores.ts';
import { expectStoreRebuilt, serverWithWebsite, storeDerivedVisits, withDb } from './helpers/derived-crash.ts';
import { call } from './helpers/listening-sightline.ts';
import { sleep } from './helpers/processes.ts';

// A time-zone change's move of the day rollups (src/modules/analytics/day-relocation.ts) cut by
// kill -9 in its middle: the server answered the change, moved some chunks of visitors, and died.
// The restarted server goes on from the committed cursor, and once the move ends every derived
// table equals a rebuild from the raw events in the new zone. Chunks of two visitors make the move
// long enough to be struck mid-way (checked while the server is down).

const FROM = 'Europe/Paris';
const TO = 'Pacific/Auckland';
const VISITORS = 400;

const stores = useCrashStores('move');

async function moveCutByKill(store: CrashStore) {
  const { node, token, website } = await serverWithWebsite(stores, store, 'move', FROM);
  const { baseUrl, start } = node;
  // Each visitor's events straddle the midnights of both zones; stored as ingestion stores them.
  await storeDerivedVisits(store, website.id, VISITORS);

  const changed = await call(baseUrl, 'PUT', `/api/v1/admin/websites/${website.id}`, { token, body: { timezone: TO } });
  expect(changed.status, JSON.stringify(changed.body)).toBe(200);
  const read = await fetch(`${baseUrl}/api/v1/analytics/overview?websiteId=${website.id}&startAt=2026-03-01&endAt=2026-03-31`, { headers: { authorization: `Bearer ${token}` } });
  expect(read.status).toBe(200);
  expect(read.headers.get('x-sightline-derived-data')).toBe('rebuilding');
  await sleep(300);
  process.kill(node.process().child.pid!, 'SIGKILL');
  await node.process().exited;

  const cut = await withDb(store, (db) => db.kysely.selectFrom('rollup_relocations').selectAll().where('website_id', '=', website.id).executeTakeFirst());
  expect(cut, 'the move was still under way when the server died').toBeDefined();
  expect(cut!.cursor, 'some chunks were committed before the kill').not.toBeNull();
  expect(Number(cut!.visitors_done)).toBeLessThan(VISITORS);

  await start();
  const deadline = Date.now() + 60_000;
  for (;;) {
    const left = await withDb(store, (db) => db.kysely.selectFrom('rollup_relocations').select('website_id').where('website_id', '=', website.id).executeTakeFirst());
    if (!left) break;
    if (Date.now() > deadline) throw new Error('the restarted server did not finish the move');
    await sleep(100);
  }
  const after = await fetch(`${baseUrl}/api/v1/analytics/overview?websiteId=${website.id}&startAt=2026-03-01&endAt=2026-03-31`, { headers: { authorization: `Bearer ${token}` } });
  expect(after.status).toBe(200);
  expect(after.headers.get('x-sightline-derived-data')).toBeNull();
  node.process().killGroup();
  await node.process().exited;

  await expectStoreRebuilt(store, website.id, TO);
}

describe('a time-zone move across kill -9 [sqlite]', () => {
  it('goes on from its cursor after a restart and ends equal to a rebuild in the new zone', { timeout: 180_000 }, async () => {
    await moveCutByKill(stores.sqlite());
  });
});

describePostgres('a time-zone move across kill -9 [postgres]', () => {
  it('goes on from its cursor after a restart and ends equal to a rebuild in the new zone', { timeout: 180_000 }, async () => {
    await moveCutByKill(await stores.postgres());
  });
});
