import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { Db } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { createAccountWithToken } from '../../src/modules/account/account.service.ts';
import { deriveBacklog } from '../../src/modules/analytics/rollup-backlog.ts';
import { recordEvents } from '../../src/modules/events/record-events.ts';
import type { CrashServer, CrashStore, CrashStores } from './crash-stores.ts';
import { DERIVED, rebuilt, rowsOf } from './derived-tables.ts';
import { newEvent } from './factories.ts';
import { call } from './listening-sightline.ts';

// What the kill -9 tests of background work on derived data share (a time-zone move,
// day-relocation-crash.test.ts; a build, derived-build-crash.test.ts): a server on a fresh store
// with a website, traffic stored and derived, and the final check against a rebuild.

/** Opens the store, runs `use`, closes it. */
export async function withDb<T>(store: CrashStore, use: (db: Db) => Promise<T>): Promise<T> {
  const db = store.open();
  try {
    return await use(db);
  } finally {
    await db.close();
  }
}

export interface CrashWebsite {
  node: CrashServer;
  token: string;
  website: { id: string };
}

/** A migrated store with an account, a started server (chunks of two visitors) and a website in `timezone`. */
export async function serverWithWebsite(stores: CrashStores, store: CrashStore, name: string, timezone: string): Promise<CrashWebsite> {
  const token = await withDb(store, async (db) => {
    await migrateToLatest(db);
    return (await createAccountWithToken(db.kysely, `${name}-${randomBytes(4).toString('hex')}@example.com`, name)).token;
  });
  const node = await stores.server(store, { REBUILD_CHUNK_MAX_VISITORS: '2' });
  await node.start();
  const created = await call(node.baseUrl, 'POST', '/api/v1/admin/websites', {
    token,
    body: { domain: `${name}-${randomBytes(3).toString('hex')}.example.com`, timezone, name },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return { node, token, website: created.body.data[0] as { id: string } };
}

/**
 * Three events of each of `visitors` visitors, straddling the midnights of most zones, some
 * goals among them, stored as ingestion stores them and derived.
 */
export async function storeDerivedVisits(store: CrashStore, websiteId: string, visitors: number): Promise<void> {
  await withDb(store, async (db) => {
    const march = Date.parse('2026-03-01T00:00:00.000Z');
    const events = Array.from({ length: visitors }, (_, v) =>
      [0, 1, 2].map((n) => {
        const occurredAt = new Date(march + v * 3_600_000 + n * 11 * 3_600_000).toISOString();
        const goal = n === 2 && v % 3 === 0;
        return newEvent(websiteId, `visitor-${v}`, { sessionId: `s-${v}-${n}`, occurredAt, path: `/p${v % 7}`, country: ['US', 'NZ', 'FR'][v % 3]!, ...(goal ? { type: 'custom' as const, name: 'signup' } : {}) });
      }),
    ).flat();
    await db.kysely.transaction().execute(async (trx) => {
      await recordEvents(trx, events, { alertCooldownSeconds: 60, mailEnabled: false });
      await deriveBacklog(trx, websiteId);
    });
  });
}

/** Every derived table of the website equals a rebuild from its raw events in `timezone`. */
export async function expectStoreRebuilt(store: CrashStore, websiteId: string, timezone: string): Promise<void> {
  await withDb(store, async (check) => {
    const expected = await rebuilt(check.kysely, websiteId, timezone);
    for (const table of DERIVED) expect(await rowsOf(check.kysely, table, websiteId), table).toEqual(expected[table]);
  });
}
