import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Db, createDatabase } from '../src/db/database.ts';
import { isDatabaseUnavailable } from '../src/db/faults.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { createAccountWithToken } from '../src/modules/account/account.service.ts';
import { startBuild } from '../src/modules/analytics/derived-build.ts';
import type { ChunkRequest } from '../src/modules/analytics/derived-chunk.ts';
import { DerivedDataThread } from '../src/modules/analytics/derived-data-thread.ts';
import { deriveBacklog } from '../src/modules/analytics/rollup-backlog.ts';
import { recordEvents } from '../src/modules/events/record-events.ts';
import { createWebsite } from '../src/modules/websites/websites.service.ts';
import { DERIVED, rebuilt, rowsOf } from './helpers/derived-tables.ts';
import { newEvent } from './helpers/factories.ts';

// On a SQLite file the chunks of builds and moves run in the derived-data thread
// (src/modules/analytics/derived-data-thread.ts), on its own connection: a build run there ends
// equal to a rebuild, the main connection's writes made between its chunks are in it, and a thread
// that dies fails its chunk as "database unavailable" and is replaced at the next.

const TIMEZONE = 'Europe/Paris';

describe('the derived-data thread', () => {
  let dir: string;
  let db: Db;
  let thread: DerivedDataThread;
  let websiteId: string;
  const request = (size: number): ChunkRequest => ({ websiteId, size, clearRows: {}, defaultClearRows: 7 });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sightline-derived-thread-'));
    db = createDatabase(`sqlite:${join(dir, 'test.db')}`);
    await migrateToLatest(db);
    const { token } = await createAccountWithToken(db.kysely, 'thread@example.com', 'Thread');
    const account = await db.kysely.selectFrom('accounts').select('id').where('email', '=', 'thread@example.com').executeTakeFirstOrThrow();
    const principal = { kind: 'token', tokenId: token, accountId: account.id, permissions: [], websiteIds: [] } as const;
    websiteId = (await createWebsite(db.kysely, principal as never, { domain: 'thread.example.com', timezone: TIMEZONE } as never)).id;
    thread = new DerivedDataThread(db.sqlitePath!, db.writeGate!);
  });
  afterAll(async () => {
    await thread.stop();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Three events of each visitor `from` to `to` - 1, stored and derived as ingestion does. */
  async function visits(from: number, to: number) {
    const march = Date.parse('2026-03-01T00:00:00.000Z');
    const events: ReturnType<typeof newEvent>[] = [];
    for (let v = from; v < to; v++) {
      for (const n of [0, 1, 2]) {
        const occurredAt = new Date(march + v * 3_600_000 + n * 7 * 3_600_000).toISOString();
        events.push(newEvent(websiteId, `visitor-${v}`, { sessionId: `s-${v}-${n}`, occurredAt, path: `/p${v % 5}`, country: ['US', 'FR'][v % 2]! }));
      }
    }
    await db.kysely.transaction().execute(async (trx) => {
      await recordEvents(trx, events, { alertCooldownSeconds: 60, mailEnabled: false });
      await deriveBacklog(trx, websiteId);
    });
  }

  it('runs a build chunk by chunk, main-connection writes between them included, and ends equal to a rebuild', async () => {
    await visits(0, 30);
    await db.kysely.transaction().execute((trx) => startBuild(trx, websiteId, 'the thread test'));
    const phases = new Set<string>();
    let chunks = 0;
    for (let finished = false; !finished; chunks++) {
      const { result, took } = await thread.run(request(4));
      expect(took).toBeGreaterThan(0);
      phases.add(String(result.phase));
      finished = result.finished;
      if (chunks === 20) await visits(30, 40); // ingestion meanwhile, on the main connection
    }
    expect([...phases].sort()).toEqual(['clear', 'derive']);
    expect(chunks).toBeGreaterThan(20);
    const expected = await rebuilt(db.kysely, websiteId, TIMEZONE);
    for (const table of DERIVED) expect(await rowsOf(db.kysely, table, websiteId), table).toEqual(expected[table]);
  });

  it('folds the events ingestion left waiting, in bounded turns, and ends equal to a rebuild with no backlog left', async () => {
    const march = Date.parse('2026-03-01T00:00:00.000Z');
    const events = Array.from({ length: 12 }, (_, i) =>
      newEvent(websiteId, `waiting-${i % 4}`, { sessionId: `w-${i % 4}`, occurredAt: new Date(march + i * 60_000).toISOString(), path: `/w${i % 3}` }),
    );
    // Stored as ingestion stores them: events and their backlog rows, nothing derived.
    await db.kysely.transaction().execute((trx) => recordEvents(trx, events, { alertCooldownSeconds: 60, mailEnabled: false }));
    const waiting = async () =>
      Number((await db.kysely.selectFrom('rollup_backlog').select((eb) => eb.fn.countAll<number>().as('n')).where('website_id', '=', websiteId).executeTakeFirstOrThrow()).n);
    expect(await waiting()).toBe(12);
    expect(await thread.deriveBacklog(websiteId, 5), 'one turn takes at most its limit').toBe(5);
    expect(await waiting()).toBe(7);
    expect(await thread.deriveBacklog(websiteId), 'without a limit: the rest').toBe(7);
    expect(await waiting()).toBe(0);
    const expected = await rebuilt(db.kysely, websiteId, TIMEZONE);
    for (const table of DERIVED) expect(await rowsOf(db.kysely, table, websiteId), table).toEqual(expected[table]);
  });

  it('fails its chunk as "database unavailable" when the thread stops, and starts another for the next', async () => {
    // A thread that cannot open its file dies at its start, failing the chunk sent to it.
    const laterDir = join(dir, 'later');
    const later = new DerivedDataThread(join(laterDir, 'later.db'), db.writeGate!);
    try {
      const failure = await later.run(request(1)).then(
        () => null,
        (error: unknown) => error,
      );
      expect(isDatabaseUnavailable(failure), String(failure)).toBe(true);
      mkdirSync(laterDir);
      const store = createDatabase(`sqlite:${join(laterDir, 'later.db')}`);
      await migrateToLatest(store);
      await store.close();
      const { result } = await later.run(request(1));
      expect(result.finished, 'no build or move there: the chunk finds nothing to do').toBe(true);
    } finally {
      await later.stop();
    }
  });

  it('takes the write gate only once it has started: a starting thread holds no writer of the main connection', async () => {
    const starting = new DerivedDataThread(db.sqlitePath!, db.writeGate!);
    try {
      let jobDone = false;
      const job = starting.deriveBacklog(websiteId).then(() => (jobDone = true));
      // The main connection's writer asks for the gate after the job did, while the thread loads.
      await db.writeGate!.run(async () => {});
      expect(jobDone, 'the writer went first: the job waits for its thread before taking the gate').toBe(false);
      await job;
      expect(jobDone).toBe(true);
    } finally {
      await starting.stop();
    }
  });

  it('start() resolves once the thread can take jobs, and a thread that cannot start rejects it', async () => {
    const ready = new DerivedDataThread(db.sqlitePath!, db.writeGate!);
    const broken = new DerivedDataThread(join(dir, 'missing', 'none.db'), db.writeGate!);
    try {
      await expect(ready.start()).resolves.toBeUndefined();
      const failure = await broken.start().then(
        () => null,
        (error: unknown) => error,
      );
      expect(isDatabaseUnavailable(failure), String(failure)).toBe(true);
    } finally {
      await ready.stop();
      await broken.stop();
    }
  });
});
