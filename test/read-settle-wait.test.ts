import { expect, it } from 'vitest';
import { lockWebsiteRollups } from '../src/db/locks.ts';
import { useTestApp } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { newEvent, ownerWithWebsite } from './helpers/factories.ts';
import { hold } from './helpers/held-locks.ts';

// An analytics read waits for the events accepted before it to be derived at most
// analyticsSettleWaitMs (issue 38: in the PostgreSQL soak every read waited for a fold of
// 0.1-0.8 s); past that it answers from the derived data as it stands, with
// X-Sightline-Derived-Data: behind, and the fold goes on for the reads after it.

const WAIT_MS = 400;

/**
 * Holds what the website's fold needs until released: on PostgreSQL its derived-data lock, on a
 * SQLite file the write gate its derived-data thread takes turns at with the main connection.
 */
async function holdTheFold(t: ReturnType<typeof useTestApp>, websiteId: string): Promise<() => Promise<void>> {
  const gate = t.app.db.writeGate;
  if (gate !== null) {
    const release = await gate.acquire();
    return async () => release();
  }
  const held = await hold(t.db, (trx) => lockWebsiteRollups(trx, websiteId));
  return async () => {
    held.release();
    await held.done;
  };
}

describeEachEngine('a read within its lag waits for nothing', (engine) => {
  const t = useTestApp(engine, { analyticsSettleWaitMs: WAIT_MS, analyticsReadLagMs: 60_000 });

  it('answers at once from what the background deriver derived, though newer events wait', async () => {
    const { owner, website } = await ownerWithWebsite(t);
    const overview = () => t.request('GET', `/api/v1/analytics/overview?websiteId=${website.id}`, { token: owner.token });
    await t.app.events.write([newEvent(website.id, 'v-first')]);
    await t.app.rollups!.settle(); // a pass of the background deriver: every waiting event
    await t.app.rollups!.stop();
    try {
      await t.app.events.write([newEvent(website.id, 'v-second')]);
      const release = await holdTheFold(t, website.id);
      let read: Awaited<ReturnType<typeof overview>>;
      try {
        read = await overview();
      } finally {
        await release();
      }
      expect(read.status, read.raw).toBe(200);
      // The fold cannot run: a read that waited for it would have been cut, and said so.
      expect(read.headers['x-sightline-derived-data']).toBeUndefined();
      expect(read.body.data[0].visitors).toBe(1);
    } finally {
      t.app.rollups!.start();
    }
    await t.app.rollups!.settle();
    expect((await overview()).body.data[0].visitors).toBe(2);
  });
});

describeEachEngine('a read waits for the backlog a bounded time', (engine) => {
  const t = useTestApp(engine, { analyticsSettleWaitMs: WAIT_MS });

  it('answers behind, and says so, while the fold cannot run; in full once it has', async () => {
    const { owner, website } = await ownerWithWebsite(t);
    const overview = () => t.request('GET', `/api/v1/analytics/overview?websiteId=${website.id}`, { token: owner.token });
    await t.app.events.write([newEvent(website.id, 'v-first')]);
    await t.app.rollups!.settle(website.id);
    const first = await overview();
    expect(first.status).toBe(200);
    expect(first.body.data[0].visitors).toBe(1);
    expect(first.headers['x-sightline-derived-data']).toBeUndefined();

    // The background deriver is stopped, so only the read's own settle could fold the next event.
    await t.app.rollups!.stop();
    try {
      await t.app.events.write([newEvent(website.id, 'v-second')]);
      const release = await holdTheFold(t, website.id);
      let behind: Awaited<ReturnType<typeof overview>>;
      const began = performance.now();
      try {
        behind = await overview();
      } finally {
        await release();
      }
      expect(behind.status, behind.raw).toBe(200);
      expect(performance.now() - began).toBeGreaterThanOrEqual(WAIT_MS - 5);
      expect(behind.headers['x-sightline-derived-data']).toBe('behind');
      expect(behind.body.data[0].visitors).toBe(1);

      // The settle the read left behind goes on once the fold can run; a read after it needs no fold.
      await t.app.rollups!.settle(website.id);
      const after = await overview();
      expect(after.status).toBe(200);
      expect(after.headers['x-sightline-derived-data']).toBeUndefined();
      expect(after.body.data[0].visitors).toBe(2);
    } finally {
      t.app.rollups!.start();
    }
  });
});

describeEachEngine('a read waiting for its fold holds no read slot', (engine) => {
  const t = useTestApp(engine, { analyticsSettleWaitMs: 3_000, analyticsReadLagMs: 0, analyticsReadConcurrency: 1 });

  // On a SQLite file every fold takes the one write gate, so a held fold holds every website's: PostgreSQL's lock is per website.
  it.skipIf(engine === 'sqlite')("answers another website's read while the one read slot's first comer waits for its fold", async () => {
    const waiting = await ownerWithWebsite(t);
    const other = await ownerWithWebsite(t);
    const overview = (site: typeof waiting) => t.request('GET', `/api/v1/analytics/overview?websiteId=${site.website.id}`, { token: site.owner.token });
    await t.app.events.write([newEvent(other.website.id, 'v-other')]);
    await t.app.rollups!.settle();
    await t.app.rollups!.stop();
    try {
      await t.app.events.write([newEvent(waiting.website.id, 'v-waiting')]);
      const release = await holdTheFold(t, waiting.website.id);
      let first: Awaited<ReturnType<typeof overview>> | null = null;
      const firstRead = overview(waiting).then((answer) => (first = answer));
      try {
        await new Promise((resolve) => setTimeout(resolve, 200)); // the first read is in, waiting for its fold
        const second = await overview(other);
        expect(second.status, second.raw).toBe(200);
        expect(second.body.data[0].visitors).toBe(1);
        expect(first, 'the first read answered before the second: it did not wait for its fold').toBeNull();
      } finally {
        await release();
      }
      await firstRead;
      expect(first!.status).toBe(200);
      expect(first!.body.data[0].visitors).toBe(1);
      expect(first!.headers['x-sightline-derived-data']).toBeUndefined();
    } finally {
      t.app.rollups!.start();
    }
  });
});
