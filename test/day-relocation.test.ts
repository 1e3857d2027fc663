import type { Kysely } from 'kysely';
import { expect, it } from 'vitest';
import type { Database } from '../src/db/schema.ts';
import { relocateChunk } from '../src/modules/analytics/day-relocation.ts';
import { deriveBacklog } from '../src/modules/analytics/rollup-backlog.ts';
import { ownerWithWebsite } from './helpers/factories.ts';
import { rowsOf } from './helpers/derived-tables.ts';
import { DERIVED_DATA_HEADER, MARCH, VISITORS, batchClock, eventsOf, expectRebuilt, finish, random, record, startA, startB } from './helpers/derived-sequences.ts';
import { useTestApp } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { holdDerivedDataWorker } from './helpers/derived-data-worker.ts';

// A time-zone change records a move of the website's day rollups and answers; the move runs a
// chunk of visitors per transaction (src/modules/analytics/day-relocation.ts). These tests stop
// the app's background derived-data worker and run the chunks themselves, so they can write between them:
// events of visitors already moved, not yet moved and new, late events, server-goal deletes, and
// further changes of zone. Whatever the order, once the move ends every derived table equals a
// rebuild from the raw events in the final zone, and while it runs the reads that would use the
// day rollups answer from the raw events, with X-Sightline-Derived-Data: rebuilding.

const HEADER = DERIVED_DATA_HEADER;

async function moving(db: Kysely<Database>, websiteId: string) {
  return db.selectFrom('rollup_relocations').selectAll().where('website_id', '=', websiteId).executeTakeFirst();
}

describeEachEngine('time-zone changes move the day rollups in the background', (engine) => {
  const t = useTestApp(engine);

  holdDerivedDataWorker(t);

  const site = () => ownerWithWebsite(t);

  it('answers the change at once, reads the raw events meanwhile, and ends equal to a rebuild in the new zone', async () => {
    const { owner, website } = await site();
    const next = random(7);
    await record(t, VISITORS.flatMap((visitor) => eventsOf(website.id, visitor, next, 6, startA())));
    await t.db.transaction().execute((trx) => deriveBacklog(trx, website.id));
    const daysBefore = await rowsOf(t.db, 'visitor_days', website.id);

    const query = { websiteId: website.id, startAt: '2026-03-01', endAt: '2026-03-21' };
    const changed = await t.request('PUT', `/api/v1/admin/websites/${website.id}`, { token: owner.token, body: { timezone: 'America/Los_Angeles' } });
    expect(changed.status, changed.raw).toBe(200);
    expect(changed.body.data[0].timezone).toBe('America/Los_Angeles');
    // Recorded, not done: the days are still those of Paris.
    expect(await moving(t.db, website.id)).toMatchObject({ from_timezone: 'Europe/Paris', to_timezone: 'America/Los_Angeles', cursor: null });
    expect(await rowsOf(t.db, 'visitor_days', website.id)).toEqual(daysBefore);

    const during = await t.request('GET', '/api/v1/analytics/overview', { token: owner.token, query });
    expect(during.status, during.raw).toBe(200);
    expect(during.headers[HEADER]).toBe('rebuilding');
    const pagesDuring = await t.request('GET', '/api/v1/analytics/pages', { token: owner.token, query });
    expect(pagesDuring.headers[HEADER]).toBe('rebuilding');
    const seriesDuring = await t.request('GET', '/api/v1/analytics/timeseries', { token: owner.token, query: { ...query, fields: 'visitors,sessions,pageviews', interval: 'week' } });
    expect(seriesDuring.status, seriesDuring.raw).toBe(200);
    expect(seriesDuring.headers[HEADER]).toBe('rebuilding');

    // One chunk, then traffic on both sides of the cursor and from new visitors, late events among it.
    await t.db.transaction().execute((trx) => relocateChunk(trx, website.id, 4));
    const cursor = (await moving(t.db, website.id))!.cursor;
    expect(cursor).not.toBeNull();
    await record(t, [...VISITORS, 'newcomer', 'AAA'].flatMap((visitor) => eventsOf(website.id, visitor, next, 2, startB())));
    await t.db.transaction().execute((trx) => deriveBacklog(trx, website.id));
    const deleted = await t.request('DELETE', '/api/v1/goals', { token: owner.token, query: { websiteId: website.id, name: 'upgrade', startAt: '2026-03-01', endAt: '2026-03-10' } });
    expect(deleted.status, deleted.raw).toBe(200);
    await finish(t.db, website.id, 4);

    expect(await moving(t.db, website.id)).toBeUndefined();
    await expectRebuilt(t.db, website.id, 'America/Los_Angeles');
    // The same reads from the moved rollups, without the header, give what the raw events gave
    // (but for the events written since, so the overview is read again raw for the comparison).
    const after = await t.request('GET', '/api/v1/analytics/overview', { token: owner.token, query });
    expect(after.headers[HEADER]).toBeUndefined();
    const raw = await t.request('GET', '/api/v1/analytics/overview', { token: owner.token, query: { ...query, timezone: 'America/Los_Angeles', startAt: '2026-03-01T00:00:00-08:00', endAt: '2026-03-21T23:59:59.999-07:00' } });
    expect(after.body.data).toEqual(raw.body.data);
    const pagesAfter = await t.request('GET', '/api/v1/analytics/pages', { token: owner.token, query });
    const pagesRaw = await t.request('GET', '/api/v1/analytics/pages', { token: owner.token, query: { websiteId: website.id, startAt: '2026-03-01T00:00:00-08:00', endAt: '2026-03-21T23:59:59.999-07:00' } });
    expect(pagesAfter.body.data).toEqual(pagesRaw.body.data);
  });

  it('moves on to a zone asked for during a move, and back to the first when asked', async () => {
    const { owner, website } = await site();
    const next = random(11);
    await record(t, VISITORS.flatMap((visitor) => eventsOf(website.id, visitor, next, 4, startA())));
    const change = (timezone: string) => t.request('PUT', `/api/v1/admin/websites/${website.id}`, { token: owner.token, body: { timezone } });

    expect((await change('Asia/Tokyo')).status).toBe(200);
    await t.db.transaction().execute((trx) => relocateChunk(trx, website.id, 3));
    expect((await change('America/New_York')).status).toBe(200);
    expect(await moving(t.db, website.id)).toMatchObject({ to_timezone: 'Asia/Tokyo', next_timezone: 'America/New_York' });
    await finish(t.db, website.id, 3);
    await expectRebuilt(t.db, website.id, 'America/New_York');

    expect((await change('Europe/Paris')).status).toBe(200);
    await t.db.transaction().execute((trx) => relocateChunk(trx, website.id, 5));
    // Back to New York before Paris is reached: the move to Paris ends, then one back follows.
    expect((await change('America/New_York')).status).toBe(200);
    expect((await change('America/New_York')).status).toBe(200);
    await finish(t.db, website.id, 5);
    await expectRebuilt(t.db, website.id, 'America/New_York');
  });

  it('ends equal to a rebuild after random sequences of events, deletes, chunks and changes', { timeout: 120_000 }, async () => {
    const zones = ['Europe/Paris', 'America/Los_Angeles', 'Asia/Kolkata', 'Pacific/Chatham', 'UTC'];
    for (const seed of [1, 2, 3]) {
      const { owner, website } = await site();
      const next = random(seed);
      let zone = 'Europe/Paris';
      for (let step = 0; step < 40; step++) {
        const roll = next();
        if (roll < 0.45) {
          const visitors = Array.from({ length: 1 + Math.floor(next() * 4) }, () => VISITORS[Math.floor(next() * VISITORS.length)]!);
          await record(t, visitors.flatMap((visitor) => eventsOf(website.id, visitor, next, 1 + Math.floor(next() * 3), batchClock(MARCH + step * 86_400_000)())));
          if (next() < 0.5) await t.db.transaction().execute((trx) => deriveBacklog(trx, website.id));
        } else if (roll < 0.75) {
          await t.db.transaction().execute((trx) => relocateChunk(trx, website.id, 1 + Math.floor(next() * 4)));
        } else if (roll < 0.9) {
          zone = zones[Math.floor(next() * zones.length)]!;
          const changed = await t.request('PUT', `/api/v1/admin/websites/${website.id}`, { token: owner.token, body: { timezone: zone } });
          expect(changed.status, changed.raw).toBe(200);
        } else {
          const visitor = VISITORS[Math.floor(next() * VISITORS.length)]!;
          const deleted = await t.request('DELETE', '/api/v1/goals', { token: owner.token, query: { websiteId: website.id, name: 'upgrade', datafast_visitor_id: visitor } });
          expect(deleted.status, deleted.raw).toBe(200);
        }
      }
      await t.db.transaction().execute((trx) => deriveBacklog(trx, website.id));
      await finish(t.db, website.id, 3);
      await expectRebuilt(t.db, website.id, zone);
    }
  });

  it('lets the background derived-data worker finish a move, and shows it on /metrics meanwhile', async () => {
    const { owner, website } = await site();
    await record(t, VISITORS.flatMap((visitor) => eventsOf(website.id, visitor, random(5), 3, startA())));
    expect((await t.request('PUT', `/api/v1/admin/websites/${website.id}`, { token: owner.token, body: { timezone: 'Asia/Tokyo' } })).status).toBe(200);
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(/^sightline_rollup_relocations 1$/m);
    t.app.derivedDataWorker.start();
    await t.app.derivedDataWorker.settle();
    expect(await moving(t.db, website.id)).toBeUndefined();
    await expectRebuilt(t.db, website.id, 'Asia/Tokyo');
    const after = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(after.body).toMatch(/^sightline_rollup_relocations 0$/m);
    expect(after.body).toMatch(/^sightline_rollup_relocation_visitors_remaining 0$/m);
  });
});
