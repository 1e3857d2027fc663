import { expect, it } from 'vitest';
import { createDatabase } from '../src/db/database.ts';
import { isDatabaseUnavailable } from '../src/db/faults.ts';
import { EventWriter } from '../src/modules/events/event-writer.ts';
import type { NewEvent } from '../src/modules/events/event.types.ts';
import { settleRollups, useTestApp } from './helpers/app.ts';
import { POSTGRES_URL, describeEachEngine } from './helpers/engines.ts';
import { UNKNOWN_ID, createAccount, createWebsite, newEvent } from './helpers/factories.ts';
import { startTcpProxy } from './helpers/tcp-proxy.ts';

// The group commit behind every event write (app.events): requests written together share a
// transaction, each is answered with its own events once they are stored, and a bad event fails
// only its own request. Each is answered once its commit is durable (on SQLite: test/sqlite-durability.test.ts).

function pageview(websiteId: string, visitorId: string): NewEvent {
  return newEvent(websiteId, visitorId, { browser: 'Chrome', os: 'Windows', device: 'desktop' });
}

describeEachEngine('event writer', (engine) => {
  const t = useTestApp(engine);

  const storedVisitors = async (websiteId: string) =>
    (await t.db.selectFrom('events').select('visitor_id').where('website_id', '=', websiteId).orderBy('visitor_id').execute()).map((row) => row.visitor_id);

  it('answers each of many writes sent together with its own stored events', async () => {
    const account = await createAccount(t);
    const website = await createWebsite(t, account.token);
    const writes = Array.from({ length: 30 }, (_, i) =>
      t.app.events.write(Array.from({ length: (i % 3) + 1 }, (_, j) => pageview(website.id, `v${String(i).padStart(2, '0')}-${j}`))),
    );
    const answers = await Promise.all(writes);

    answers.forEach((recorded, i) => {
      expect(recorded.map((e) => e.visitorId)).toEqual(Array.from({ length: (i % 3) + 1 }, (_, j) => `v${String(i).padStart(2, '0')}-${j}`));
      for (const event of recorded) expect(event.id).toMatch(/^[0-9a-f]{24}$/);
    });
    const expected = answers.flat().map((e) => e.visitorId).sort();
    expect(await storedVisitors(website.id)).toEqual(expected);
    await settleRollups(t)(website.id);
    const totals = await t.db.selectFrom('daily_totals').select(['pageviews', 'visitors']).where('website_id', '=', website.id).execute();
    expect(totals).toEqual([{ pageviews: 60, visitors: 60 }]);
  });

  it('fails only the write whose event cannot be stored, keeping the others of its batch', async () => {
    const account = await createAccount(t);
    const website = await createWebsite(t, account.token);
    const [first, broken, last] = await Promise.allSettled([
      t.app.events.write([pageview(website.id, 'first')]),
      t.app.events.write([pageview(UNKNOWN_ID, 'broken')]),
      t.app.events.write([pageview(website.id, 'last')]),
    ]);

    expect(first.status).toBe('fulfilled');
    expect(broken.status).toBe('rejected');
    expect(last.status).toBe('fulfilled');
    expect(await storedVisitors(website.id)).toEqual(['first', 'last']);
    expect(await t.db.selectFrom('events').select('id').where('website_id', '=', UNKNOWN_ID).execute()).toEqual([]);
  });

  it('keeps a commit as it is when a commit listener throws: nothing is written twice', async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    t.app.events.onCommitted(() => {
      throw new Error('a broken listener');
    });
    const [first, second] = await Promise.all([
      t.app.events.write([pageview(website.id, 'listener-a')]),
      t.app.events.write([pageview(website.id, 'listener-b')]),
    ]);
    expect(first).toHaveLength(1);
    expect(second).toHaveLength(1);
    const stored = await t.db.selectFrom('events').select('visitor_id').where('website_id', '=', website.id).execute();
    expect(stored.map((row) => row.visitor_id).sort()).toEqual(['listener-a', 'listener-b']);
  });

  it('writes again after a flush', async () => {
    const account = await createAccount(t);
    const website = await createWebsite(t, account.token);
    await t.app.events.write([pageview(website.id, 'before')]);
    await t.app.events.flush();
    const [recorded] = await t.app.events.write([pageview(website.id, 'after')]);

    expect(recorded!.visitorId).toBe('after');
    expect(await storedVisitors(website.id)).toEqual(['after', 'before']);
  });

  if (engine === 'postgres') {
    it('answers every write of a batch whose commit outcome is unknown as unavailable, never writing it twice, and keeps writing', async () => {
      const account = await createAccount(t);
      const website = await createWebsite(t, account.token);
      // The writer reaches PostgreSQL through a relay that can lose the answer to a COMMIT.
      const target = new URL(POSTGRES_URL);
      const proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
      const viaProxy = new URL(POSTGRES_URL);
      viaProxy.hostname = '127.0.0.1';
      viaProxy.port = String(proxy.port);
      const db = createDatabase(viaProxy.toString(), { pgSchema: t.app.db.pgSchema! });
      const writer = new EventWriter(db.kysely, { alertCooldownSeconds: 60, mailEnabled: false });
      try {
        proxy.dropAfterSending('commit\0');
        const outcomes = await Promise.allSettled([
          writer.write([pageview(website.id, 'lost-answer-a')]),
          writer.write([pageview(website.id, 'lost-answer-b')]),
        ]);
        for (const outcome of outcomes) {
          expect(outcome.status).toBe('rejected');
          expect(isDatabaseUnavailable((outcome as PromiseRejectedResult).reason)).toBe(true);
        }
        // The server did commit: each event is there once, not once more from a retry. It reads
        // the COMMIT after the client's side is gone, so under load the commit may land a moment
        // after the rejections: wait for it (a retry would show a third row, never fewer).
        await expect.poll(() => storedVisitors(website.id), { timeout: 5_000 }).toEqual(['lost-answer-a', 'lost-answer-b']);

        const [recorded] = await writer.write([pageview(website.id, 'next')]);
        expect(recorded!.visitorId).toBe('next');
        expect(await storedVisitors(website.id)).toEqual(['lost-answer-a', 'lost-answer-b', 'next']);
      } finally {
        await writer.flush();
        await db.close();
        await proxy.close();
      }
    });
  }
});
