import type { Kysely } from 'kysely';
import { expect, it } from 'vitest';
import { rollupBacklog } from '../src/db/migrations/0021-rollup-backlog.ts';
import { paymentBacklog } from '../src/db/migrations/0038-payment-backlog.ts';
import type { Database } from '../src/db/schema.ts';
import type { NewEvent } from '../src/modules/events/event.types.ts';
import { RollupDeriver } from '../src/modules/analytics/rollup-backlog.ts';
import { EventWriter } from '../src/modules/events/event-writer.ts';
import { recordEvents } from '../src/modules/events/record-events.ts';
import { deleteWebsite } from '../src/modules/websites/website-deletion.ts';
import { createApiKey, newEvent, ownerWithWebsite } from './helpers/factories.ts';
import { DERIVED, rebuilt, rowsOf } from './helpers/derived-tables.ts';
import { type TestApp, useTestApp } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { sleep } from './helpers/processes.ts';

// Ingestion answers once the event and its backlog row are committed; the rollups are derived
// later from rollup_backlog (src/modules/analytics/rollup-backlog.ts). These tests hold events
// in the backlog (written straight through recordEvents, which wakes no deriver) and check each
// way out of it: a read of the website API, the background deriver, a server-goal delete and a
// change of time zone that find events waiting, and a graceful stop. After each, every derived
// table equals a rebuild from the raw events.

const EFFECTS = { alertCooldownSeconds: 60, mailEnabled: false };

async function waiting(db: Kysely<Database>, websiteId: string): Promise<number> {
  const row = await db.selectFrom('rollup_backlog').select((eb) => eb.fn.countAll<number>().as('n')).where('website_id', '=', websiteId).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Accepted as ingestion accepts them, but no deriver is told: they wait until something settles them. */
async function heldBack(t: TestApp, events: NewEvent[]): Promise<void> {
  await t.db.transaction().execute((trx) => recordEvents(trx, events, EFFECTS));
}

async function expectRollupsEqualRebuild(t: TestApp, websiteId: string, timezone: string): Promise<void> {
  const expected = await rebuilt(t.db, websiteId, timezone);
  for (const table of DERIVED) expect(await rowsOf(t.db, table, websiteId), table).toEqual(expected[table]);
}

describeEachEngine('rollups derived from the backlog', (engine) => {
  const t = useTestApp(engine);

  const site = () => ownerWithWebsite(t);

  /** Two visitors over two days with sessions, a goal and a server goal: every derived table gets rows. */
  const traffic = (websiteId: string, tag: string): NewEvent[] => [
    newEvent(websiteId, `a-${tag}`, { sessionId: `s1-${tag}`, path: '/', country: 'US', browser: 'Firefox', occurredAt: '2026-03-02T10:00:00.000Z' }),
    newEvent(websiteId, `a-${tag}`, { sessionId: `s1-${tag}`, path: '/pricing', country: 'US', browser: 'Firefox', occurredAt: '2026-03-02T10:05:00.000Z' }),
    newEvent(websiteId, `a-${tag}`, { type: 'custom', name: 'signup', sessionId: `s1-${tag}`, path: '/pricing', country: 'US', occurredAt: '2026-03-02T10:06:00.000Z' }),
    newEvent(websiteId, `b-${tag}`, { sessionId: `s2-${tag}`, path: '/docs', country: 'DE', device: 'mobile', occurredAt: '2026-03-03T23:30:00.000Z' }),
    newEvent(websiteId, `b-${tag}`, { type: 'custom', name: 'upgrade', source: 'api', sessionId: null, hostname: null, path: null, occurredAt: '2026-03-04T09:00:00.000Z' }),
  ];

  it('holds an acknowledged event in the backlog until a read of the website API derives it', async () => {
    const { owner, website } = await site();
    await heldBack(t, traffic(website.id, 'read'));
    expect(await waiting(t.db, website.id)).toBe(5);
    expect(await rowsOf(t.db, 'sessions', website.id)).toEqual([]);

    const overview = await t.request('GET', '/api/v1/analytics/overview', { token: owner.token, query: { websiteId: website.id, startAt: '2026-03-01', endAt: '2026-03-31' } });
    expect(overview.status, overview.raw).toBe(200);
    expect(overview.body.data[0]).toMatchObject({ visitors: 2, sessions: 2, pageviews: 3 });
    expect(await waiting(t.db, website.id)).toBe(0);
    await expectRollupsEqualRebuild(t, website.id, 'Europe/Paris');
  });

  it('reports the waiting events on /metrics', async () => {
    const { website } = await site();
    await heldBack(t, traffic(website.id, 'metrics'));
    const all = await t.db.selectFrom('rollup_backlog').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(Number(all.n)).toBeGreaterThanOrEqual(5);
    const scrape = await t.request('GET', '/metrics');
    expect(scrape.status, scrape.raw).toBe(200);
    expect(scrape.raw).toMatch(new RegExp(`^sightline_rollup_backlog_events ${Number(all.n)}$`, 'm'));
    await t.app.rollups!.settle(website.id);
  });

  it('derives what ingestion accepted in the background, with no read', async () => {
    const { website } = await site();
    await t.app.events.write(traffic(website.id, 'background'));
    for (let tries = 0; tries < 100 && (await waiting(t.db, website.id)) > 0; tries++) await sleep(50);
    expect(await waiting(t.db, website.id)).toBe(0);
    await expectRollupsEqualRebuild(t, website.id, 'Europe/Paris');
  });

  it('holds ingestion back instead of letting the backlog grow past its bound', async () => {
    const { website } = await site();
    // A writer and a deriver of their own, with a small bound (the server's is 10,000).
    const writer = new EventWriter(t.db, EFFECTS);
    const deriver = new RollupDeriver(t.db, t.app.log, 800);
    writer.onCommitted((recorded) => deriver.wake(recorded.length));
    writer.throttleWith(() => deriver.throttle());
    let most = 0;
    const writes = Array.from({ length: 8 }, (_, batch) =>
      writer
        .write(Array.from({ length: 400 }, (_, i) => newEvent(website.id, `load-${batch}-${i % 150}`, { path: `/p${i % 20}`, occurredAt: '2026-03-05T10:00:00.000Z' })))
        .then(async () => {
          most = Math.max(most, await waiting(t.db, website.id));
        }),
    );
    await Promise.all(writes);
    // Each commit of up to 400 events first waits while 800 wait.
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(800 + 400);
    await deriver.stop();
    expect(await waiting(t.db, website.id)).toBe(0);
    await expectRollupsEqualRebuild(t, website.id, 'Europe/Paris');
  });

  it('derives the waiting events before a server-goal delete repairs the rollups', async () => {
    const { owner, website } = await site();
    await heldBack(t, traffic(website.id, 'delete'));
    const key = (await createApiKey(t, owner.token, website.id)).key;
    const deleted = await t.request('DELETE', '/api/v1/goals', { token: key, query: { name: 'upgrade' } });
    expect(deleted.status, deleted.raw).toBe(200);
    expect(deleted.body.data[0].deleted).toBe(1);
    expect(await waiting(t.db, website.id)).toBe(0);
    await expectRollupsEqualRebuild(t, website.id, 'Europe/Paris');
  });

  it('derives the waiting events, each in its visitor\'s zone, when a change of time zone moves the day rollups', async () => {
    const { owner, website } = await site();
    await heldBack(t, traffic(website.id, 'zone'));
    const moved = await t.request('PUT', `/api/v1/admin/websites/${website.id}`, { token: owner.token, body: { timezone: 'America/Los_Angeles' } });
    expect(moved.status, moved.raw).toBe(200);
    // The change records the move; the worker's first chunk derives what waits (day-relocation.ts).
    await t.app.derivedDataWorker.settle();
    expect(await waiting(t.db, website.id)).toBe(0);
    await expectRollupsEqualRebuild(t, website.id, 'America/Los_Angeles');
  });

  it('skips a backlog row whose event is gone, and lets the row go', async () => {
    const { website } = await site();
    await t.db.insertInto('rollup_backlog').values({ website_id: website.id, event_id: 'no-such-event' }).execute();
    await heldBack(t, traffic(website.id, 'orphan'));
    await t.db.insertInto('rollup_backlog').values({ website_id: website.id, event_id: 'no-such-event-either' }).execute();
    await t.app.rollups!.settle(website.id);
    expect(await waiting(t.db, website.id)).toBe(0);
    await expectRollupsEqualRebuild(t, website.id, 'Europe/Paris');
  });

  it('takes the waiting events with a deleted website', async () => {
    const { website } = await site();
    await heldBack(t, traffic(website.id, 'gone'));
    const gone = await deleteWebsite(t.db, website.id);
    expect(gone?.deletedRows.rollup_backlog).toBe(5);
    expect(await waiting(t.db, website.id)).toBe(0);
  });

  it('migration 0021 refuses to go down while events wait, and goes down and up once none does', async () => {
    const { website } = await site();
    await heldBack(t, traffic(website.id, 'migration'));
    const migration = rollupBacklog(engine);
    const untyped = t.db as unknown as Kysely<unknown>;
    await expect(migration.down(untyped)).rejects.toThrow(/rollup_backlog holds \d+ events not yet in the rollups/);
    await t.app.rollups!.settle();
    // 0038 (payments in the backlog) changed the table since: down first, up last.
    const payments = paymentBacklog(engine);
    await payments.down(untyped);
    await migration.down(untyped);
    await migration.up(untyped);
    await payments.up(untyped);
    expect(await waiting(t.db, website.id)).toBe(0);
  });

  // Last: it stops this app's deriver.
  it('derives every waiting event at a graceful stop', async () => {
    const { website } = await site();
    await heldBack(t, traffic(website.id, 'stop'));
    await t.app.rollups!.stop();
    expect(await waiting(t.db, website.id)).toBe(0);
    await expectRollupsEqualRebuild(t, website.id, 'Europe/Paris');
  });
});
