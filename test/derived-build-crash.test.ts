import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { markBuilds } from '../src/db/migrations/derived-builds.ts';
import { type CrashStore, describePostgres, useCrashStores } from './helpers/crash-stores.ts';
import { expectStoreRebuilt, serverWithWebsite, storeDerivedVisits, withDb } from './helpers/derived-crash.ts';
import { call } from './helpers/listening-sightline.ts';
import { sleep } from './helpers/processes.ts';

// A build of derived tables (src/modules/analytics/derived-build.ts) cut by kill -9 in its
// middle, as after an upgrade whose migration marked one: the server serves at once, builds some
// chunks of visitors, and dies. The restarted server goes on from the committed cursor; once the
// build ends every derived table equals a rebuild from the raw events, and the reads use them
// again. Chunks of two visitors make the build long enough to be struck mid-way (checked while
// the server is down). Events keep arriving through the API while it runs.

const ZONE = 'Europe/Paris';
const VISITORS = 400;

const stores = useCrashStores('build');

const buildOf = (store: CrashStore, websiteId: string) =>
  withDb(store, (db) => db.kysely.selectFrom('derived_builds').selectAll().where('website_id', '=', websiteId).executeTakeFirst());

async function buildCutByKill(store: CrashStore) {
  const { node, token, website } = await serverWithWebsite(stores, store, 'build', ZONE);
  const { baseUrl, start } = node;
  const apiKey = (await call(baseUrl, 'POST', `/api/v1/admin/websites/${website.id}/apikeys`, { token, body: { name: 'server' } })).body.data[0].key as string;
  node.process().killGroup();
  await node.process().exited;

  // The traffic of a release before the upgrade, derived; then the upgrade's migration marks a build.
  await storeDerivedVisits(store, website.id, VISITORS);
  await withDb(store, (db) => markBuilds(db.kysely as unknown as Kysely<unknown>, 'migration 0019: breakdown_days, breakdown_last_days'));

  await start();
  const overview = `${baseUrl}/api/v1/analytics/overview?websiteId=${website.id}&startAt=2026-03-01&endAt=2026-03-31`;
  const read = await fetch(overview, { headers: { authorization: `Bearer ${token}` } });
  expect(read.status).toBe(200);
  expect(read.headers.get('x-sightline-derived-data')).toBe('rebuilding');
  // Server goals of visitors on both sides of the cursor-to-be, while the build runs.
  for (const v of [1, 399]) {
    const goal = await call(baseUrl, 'POST', '/api/v1/goals', { token: apiKey, body: { datafast_visitor_id: `visitor-${v}`, name: 'upgrade' } });
    expect(goal.status, JSON.stringify(goal.body)).toBe(200);
  }
  const deadline = Date.now() + 60_000;
  while ((await buildOf(store, website.id))?.cursor == null) {
    if (Date.now() > deadline) throw new Error('the build never reached its derive phase');
    await sleep(20);
  }
  process.kill(node.process().child.pid!, 'SIGKILL');
  await node.process().exited;

  const cut = await buildOf(store, website.id);
  expect(cut, 'the build was still under way when the server died').toBeDefined();
  expect(cut!.cursor, 'some chunks were committed before the kill').not.toBeNull();
  expect(Number(cut!.visitors_done)).toBeLessThan(VISITORS);

  await start();
  for (;;) {
    if (!(await buildOf(store, website.id))) break;
    if (Date.now() > deadline + 60_000) throw new Error('the restarted server did not finish the build');
    await sleep(100);
  }
  const after = await fetch(overview, { headers: { authorization: `Bearer ${token}` } });
  expect(after.status).toBe(200);
  expect(after.headers.get('x-sightline-derived-data')).toBeNull();
  node.process().killGroup();
  await node.process().exited;

  await expectStoreRebuilt(store, website.id, ZONE);
}

describe('a build of derived tables across kill -9 [sqlite]', () => {
  it('serves at once, goes on from its cursor after a restart and ends equal to a rebuild', { timeout: 180_000 }, async () => {
    await buildCutByKill(stores.sqlite());
  });
});

describePostgres('a build of derived tables across kill -9 [postgres]', () => {
  it('serves at once, goes on from its cursor after a restart and ends equal to a rebuild', { timeout: 180_000 }, async () => {
    await buildCutByKill(await stores.postgres());
  });
});
