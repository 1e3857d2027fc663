import { type Kysely, sql } from 'kysely';
import { expect, it } from 'vitest';
import type { Database } from '../src/db/schema.ts';
import { buildChunk, buildScope, startBuild } from '../src/modules/analytics/derived-build.ts';
import { BUILT_TABLES } from '../src/modules/analytics/derived-tables.ts';
import { deriveBacklog } from '../src/modules/analytics/rollup-backlog.ts';
import { markBuilds } from '../src/db/migrations/derived-builds.ts';
import { buildEventCursor } from '../src/db/migrations/0024-build-event-cursor.ts';
import { newId } from '../src/lib/ids.ts';
import { storePayment } from './helpers/payments.ts';
import { useTestApp } from './helpers/app.ts';
import { holdDerivedDataWorker } from './helpers/derived-data-worker.ts';
import { derivedDataChunk } from '../src/modules/analytics/derived-chunk.ts';
import { DERIVED_DATA_HEADER, MARCH, VISITORS, batchClock, eventsOf, expectRebuilt, finish, random, record, startA, startB } from './helpers/derived-sequences.ts';
import { rowsOf } from './helpers/derived-tables.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { newEvent, ownerWithWebsite } from './helpers/factories.ts';

// A build of a website's derived tables (src/modules/analytics/derived-build.ts): recorded by a
// migration or an operator, run by the background worker a chunk per transaction, first clearing
// the old rows, then deriving the visitors in order. These tests hold the worker and run the
// chunks themselves, so they can write between them: events of visitors built and not yet built,
// late events, payments and refunds, goal deletes, changes of zone. Whatever the order, once the
// build ends every derived table equals a rebuild from the raw events; while it runs the reads
// that would use the rollups read the raw events, with X-Sightline-Derived-Data: rebuilding.

async function building(db: Kysely<Database>, websiteId: string) {
  return db.selectFrom('derived_builds').selectAll().where('website_id', '=', websiteId).executeTakeFirst();
}

async function start(db: Kysely<Database>, websiteId: string) {
  await db.transaction().execute((trx) => startBuild(trx, websiteId, 'a test'));
}

/** Rows of every table the build clears, for the website. */
async function builtRows(db: Kysely<Database>, websiteId: string) {
  return Object.fromEntries(await Promise.all(BUILT_TABLES.map(async (table) => [table.name, await rowsOf(db, table.name, websiteId)] as const)));
}

describeEachEngine('builds of derived tables run in the background', (engine) => {
  const t = useTestApp(engine);

  holdDerivedDataWorker(t);

  const site = () => ownerWithWebsite(t);

  async function pay(websiteId: string, visitorId: string, amountMinor: number, occurredAt: string) {
    const row = {
      id: newId(), website_id: websiteId, transaction_id: `tx-${newId()}`, amount_minor: amountMinor, currency: 'USD', visitor_id: visitorId,
      email: null, renewal: false, refunded: false, occurred_at: occurredAt, created_at: occurredAt,
    };
    await storePayment(t.db, row);
    return row.transaction_id;
  }

  it('clears and derives a chunk at a time, reads the raw events meanwhile, and ends equal to what ingestion kept', async () => {
    const { owner, website } = await site();
    const next = random(3);
    await record(t, VISITORS.flatMap((visitor) => eventsOf(website.id, visitor, next, 5, startA())));
    await pay(website.id, 'alpha', 1200, '2026-03-03T10:00:00.000Z');
    await t.db.transaction().execute((trx) => deriveBacklog(trx, website.id));
    const kept = await builtRows(t.db, website.id);
    const query = { websiteId: website.id, startAt: '2026-03-01', endAt: '2026-03-21' };
    const read = async (path: string, extra: Record<string, string> = {}, allTime = false) => {
      const answer = await t.request('GET', path, { token: owner.token, query: allTime ? { websiteId: website.id } : { ...query, ...extra } });
      expect(answer.status, answer.raw).toBe(200);
      return answer;
    };
    const before = { overview: (await read('/api/v1/analytics/overview')).body.data, pages: (await read('/api/v1/analytics/pages')).body.data };
    const allTime = (await read('/api/v1/analytics/countries', {}, true)).body.data;

    await start(t.db, website.id);
    const derivedData = await t.request('GET', `/api/v1/admin/websites/${website.id}/derived-data`, { token: owner.token });
    expect(derivedData.body.data[0]).toMatchObject({ state: 'rebuilding', reason: 'build', detail: 'a test', eventsDone: 0, eventsTotal: null, progress: null });
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(/^sightline_derived_builds 1$/m);

    // The clear phase takes CLEAR_ROWS rows a chunk, the tables others are summed from first.
    let chunks = 0;
    while ((await building(t.db, website.id))!.phase === 'clear') {
      await t.db.transaction().execute((trx) => buildChunk(trx, website.id, 3));
      chunks++;
    }
    expect(chunks).toBeGreaterThan(1);
    // The tables reads have no other source for stay, to be replaced visitor by visitor.
    for (const table of BUILT_TABLES) expect(await rowsOf(t.db, table.name, website.id), table.name).toEqual(table.replacedPerVisitor ? kept[table.name] : []);
    expect((await building(t.db, website.id))!.events_total).not.toBeNull();

    // Empty tables or half-built ones: the reads answer from the raw events, the same as before.
    // Chunks of 5 events, a visitor's: the sessions (bounce rate, durations) of a visitor the
    // cursor stands inside hold only its events up to it (docs/decisions.md).
    for (let chunk = 0; chunk < 3; chunk++) {
      const overview = await read('/api/v1/analytics/overview');
      expect(overview.headers[DERIVED_DATA_HEADER]).toBe('rebuilding');
      expect(overview.body.data).toEqual(before.overview);
      const pages = await read('/api/v1/analytics/pages');
      expect(pages.headers[DERIVED_DATA_HEADER]).toBe('rebuilding');
      expect(pages.body.data).toEqual(before.pages);
      const countries = await read('/api/v1/analytics/countries', {}, true);
      expect(countries.body.data).toEqual(allTime);
      const series = await read('/api/v1/analytics/timeseries', { fields: 'visitors,sessions,pageviews', interval: 'week' });
      expect(series.headers[DERIVED_DATA_HEADER]).toBe('rebuilding');
      await t.db.transaction().execute((trx) => buildChunk(trx, website.id, 5));
    }
    const halfway = (await t.request('GET', `/api/v1/admin/websites/${website.id}/derived-data`, { token: owner.token })).body.data[0];
    expect(halfway.eventsDone).toBe(15);
    expect(halfway.visitorsDone).toBe(3);
    expect(halfway.progress).toBeGreaterThan(0);
    expect(halfway.progress).toBeLessThan(1);

    await finish(t.db, website.id, 4);
    expect(await building(t.db, website.id)).toBeUndefined();
    expect(await builtRows(t.db, website.id)).toEqual(kept);
    const after = await read('/api/v1/analytics/overview');
    expect(after.headers[DERIVED_DATA_HEADER]).toBeUndefined();
    expect(after.body.data).toEqual(before.overview);
    expect((await read('/api/v1/analytics/pages')).body.data).toEqual(before.pages);
    expect((await read('/api/v1/analytics/countries', {}, true)).body.data).toEqual(allTime);
    const done = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(done.body).toMatch(/^sightline_derived_builds 0$/m);
    expect(done.body).toMatch(/^sightline_derived_build_events_remaining 0$/m);
  });

  it('ends equal to a rebuild after random sequences of events, payments, refunds, deletes, chunks and changes', { timeout: 120_000 }, async () => {
    const zones = ['Europe/Paris', 'America/Los_Angeles', 'Asia/Kolkata', 'UTC'];
    for (const seed of [4, 5, 6]) {
      const { owner, website } = await site();
      const next = random(seed);
      let zone = 'Europe/Paris';
      const paid: string[] = [];
      let derivedDuringSteps = 0;
      // Some traffic, derived, before the build starts; the build starts again when the zone changes.
      await record(t, VISITORS.slice(0, 8).flatMap((visitor) => eventsOf(website.id, visitor, next, 3, startA())));
      await t.db.transaction().execute((trx) => deriveBacklog(trx, website.id));
      await start(t.db, website.id);
      // One sequence writes while the old rows are cleared; the others mostly while visitors are derived.
      if (seed !== 4) while ((await building(t.db, website.id))!.phase !== 'derive') await t.db.transaction().execute((trx) => buildChunk(trx, website.id, 1));
      for (let step = 0; step < 60; step++) {
        const roll = next();
        if (roll < 0.4) {
          const visitors = Array.from({ length: 1 + Math.floor(next() * 4) }, () => VISITORS[Math.floor(next() * VISITORS.length)]!);
          await record(t, visitors.flatMap((visitor) => eventsOf(website.id, visitor, next, 1 + Math.floor(next() * 3), batchClock(MARCH + step * 86_400_000)())));
          if (next() < 0.5) await t.db.transaction().execute((trx) => deriveBacklog(trx, website.id));
        } else if (roll < 0.7) {
          const chunk = await t.db.transaction().execute((trx) => derivedDataChunk(trx, website.id, 1 + Math.floor(next() * 4)));
          if (chunk.phase === 'derive') derivedDuringSteps++;
        } else if (roll < 0.8) {
          const visitor = VISITORS[Math.floor(next() * VISITORS.length)]!;
          paid.push(await pay(website.id, visitor, 100 + Math.floor(next() * 900), new Date(MARCH + step * 86_400_000).toISOString()));
        } else if (roll < 0.85 && paid.length > 0) {
          const refunded = await t.request('DELETE', '/api/v1/payments', { token: owner.token, query: { websiteId: website.id, transaction_id: paid.shift()! } });
          expect(refunded.status, refunded.raw).toBe(200);
        } else if (roll < 0.92) {
          zone = zones[Math.floor(next() * zones.length)]!;
          const during = (await building(t.db, website.id)) !== undefined;
          const changed = await t.request('PUT', `/api/v1/admin/websites/${website.id}`, { token: owner.token, body: { timezone: zone } });
          expect(changed.status, changed.raw).toBe(200);
          // A change during a build starts it again in the new zone, with no move of its own.
          if (during) expect(await t.db.selectFrom('rollup_relocations').selectAll().where('website_id', '=', website.id).executeTakeFirst()).toBeUndefined();
        } else {
          const visitor = VISITORS[Math.floor(next() * VISITORS.length)]!;
          const deleted = await t.request('DELETE', '/api/v1/goals', { token: owner.token, query: { websiteId: website.id, name: 'upgrade', datafast_visitor_id: visitor } });
          expect(deleted.status, deleted.raw).toBe(200);
        }
      }
      if (seed !== 4) expect(derivedDuringSteps, 'visitors were derived between the writes').toBeGreaterThan(0);
      await finish(t.db, website.id, 3);
      await t.db.transaction().execute((trx) => deriveBacklog(trx, website.id));
      await expectRebuilt(t.db, website.id, zone);
    }
  });

  it('repairs after a goal delete only the visitors already built, on either side of the cursor and inside it', async () => {
    const { owner, website } = await site();
    const next = random(21);
    // Every visitor completes the server goal "upgrade" at least once: four events each.
    await record(t, VISITORS.flatMap((visitor) => [...eventsOf(website.id, visitor, next, 3, startA()), newEvent(website.id, visitor, { type: 'custom', name: 'upgrade', source: 'api', sessionId: null, hostname: null, path: null, occurredAt: '2026-03-15T12:00:00.000Z' })]));
    await t.db.transaction().execute((trx) => deriveBacklog(trx, website.id));
    await start(t.db, website.id);
    while ((await building(t.db, website.id))!.phase !== 'derive') await t.db.transaction().execute((trx) => buildChunk(trx, website.id, 1));
    // Ten events: two visitors whole, and the cursor two events into the third.
    await t.db.transaction().execute((trx) => buildChunk(trx, website.id, 10));
    const { cursor, cursor_event_id: inside } = (await building(t.db, website.id))!;
    const ordered = (await t.db.selectFrom('events').select('visitor_id').distinct().where('website_id', '=', website.id).orderBy('visitor_id').execute()).map((row) => row.visitor_id);
    expect(ordered.indexOf(cursor!)).toBe(2);
    const [whole, notBuilt] = [ordered[0]!, ordered[5]!];
    const { built } = await buildScope(t.db, website.id, [whole, notBuilt]);
    expect(built).toEqual([whole]);
    // A delete of the visitor the cursor stands in derives that visitor to its end first.
    for (const visitor of [whole, cursor!, notBuilt]) {
      const deleted = await t.request('DELETE', '/api/v1/goals', { token: owner.token, query: { websiteId: website.id, name: 'upgrade', datafast_visitor_id: visitor } });
      expect(deleted.status, deleted.raw).toBe(200);
      expect(deleted.body.data[0].deleted).toBeGreaterThan(0);
    }
    const moved = (await building(t.db, website.id))!;
    expect(moved.cursor).toBe(cursor);
    expect(moved.cursor_event_id).not.toBe(inside);
    expect(Number(moved.events_done)).toBe(12);
    await finish(t.db, website.id, 4);
    await expectRebuilt(t.db, website.id, 'Europe/Paris');
  });

  it('migration 0024 sends a build under way back to its clear phase, down and up, and it still ends exact', async () => {
    const { website } = await site();
    await record(t, VISITORS.flatMap((visitor) => eventsOf(website.id, visitor, random(31), 4, startA())));
    await t.db.transaction().execute((trx) => deriveBacklog(trx, website.id));
    await start(t.db, website.id);
    while ((await building(t.db, website.id))!.phase !== 'derive') await t.db.transaction().execute((trx) => buildChunk(trx, website.id, 1));
    await t.db.transaction().execute((trx) => buildChunk(trx, website.id, 6));
    const migration = buildEventCursor(engine);
    const untyped = t.db as unknown as Kysely<unknown>;
    await migration.down(untyped);
    // The older release's cursor named the last visitor built.
    expect(await t.db.selectFrom('derived_builds').select(['phase', 'cursor']).where('website_id', '=', website.id).executeTakeFirst()).toEqual({ phase: 'clear', cursor: null });
    await untyped.updateTable('derived_builds' as never).set({ phase: 'derive', cursor: VISITORS[0] } as never).execute();
    await migration.up(untyped);
    expect(await building(t.db, website.id)).toMatchObject({ phase: 'clear', cursor: null, cursor_at: null, cursor_event_id: null, events_done: expect.anything() });
    expect(Number((await building(t.db, website.id))!.events_done)).toBe(0);
    await finish(t.db, website.id, 3);
    await expectRebuilt(t.db, website.id, 'Europe/Paris');
  });

  it('clears the sessions and visitor totals too when a migration finds them unlike their events', async () => {
    const { website } = await site();
    await record(t, VISITORS.flatMap((visitor) => eventsOf(website.id, visitor, random(12), 4, startA())));
    await t.db.transaction().execute((trx) => deriveBacklog(trx, website.id));
    const kept = await builtRows(t.db, website.id);
    // As migration 0016 left them: columns the rows do not fill yet.
    await t.db.updateTable('visitor_totals').set({ sessions: 0, bounces: 0, millis: 0, country: null }).where('website_id', '=', website.id).execute();
    await markBuilds(t.db as unknown as Kysely<unknown>, 'migration 0016: the attributes of visitor_totals', true);
    expect(await building(t.db, website.id)).toMatchObject({ phase: 'clear-all', reason: 'migration 0016: the attributes of visitor_totals' });
    while ((await building(t.db, website.id))!.phase !== 'derive') await t.db.transaction().execute((trx) => buildChunk(trx, website.id, 3));
    for (const table of BUILT_TABLES) expect(await rowsOf(t.db, table.name, website.id), table.name).toEqual([]);
    await finish(t.db, website.id, 5);
    expect(await builtRows(t.db, website.id)).toEqual(kept);
  });

  it('runs whole in the worker, which vacuums the cleared tables before deriving on PostgreSQL (their deleted rows are read by every scan until then)', async () => {
    const { website } = await site();
    await record(t, VISITORS.flatMap((visitor) => eventsOf(website.id, visitor, random(41), 3, startA())));
    await t.db.transaction().execute((trx) => deriveBacklog(trx, website.id));
    const vacuumed = async (): Promise<Record<string, number>> => {
      // SQLite has no vacuum between the phases: its deletes leave no rows for scans to read.
      if (engine === 'sqlite') return {};
      const { rows } = await sql<{ relname: string; vacuums: number }>`select relname, vacuum_count as vacuums from pg_stat_user_tables where schemaname = current_schema()`.execute(t.db);
      return Object.fromEntries(rows.map((row) => [row.relname, Number(row.vacuums)]));
    };
    const before = await vacuumed();
    await start(t.db, website.id);
    await t.app.derivedDataWorker.settle();
    expect(await building(t.db, website.id)).toBeUndefined();
    // The statistics arrive when the vacuum reports them.
    let after = await vacuumed();
    for (let tries = 0; engine === 'postgres' && tries < 40 && BUILT_TABLES.some((table) => !(after[table.name]! > (before[table.name] ?? 0))); tries++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      after = await vacuumed();
    }
    if (engine === 'postgres') for (const table of BUILT_TABLES) expect(after[table.name], table.name).toBeGreaterThan(before[table.name] ?? 0);
    await expectRebuilt(t.db, website.id, 'Europe/Paris');
  });

  it('takes over a move under way, and a change of zone during the build leaves no move behind', async () => {
    const { owner, website } = await site();
    await record(t, VISITORS.flatMap((visitor) => eventsOf(website.id, visitor, random(9), 3, startB())));
    expect((await t.request('PUT', `/api/v1/admin/websites/${website.id}`, { token: owner.token, body: { timezone: 'Asia/Tokyo' } })).status).toBe(200);
    expect(await t.db.selectFrom('rollup_relocations').selectAll().where('website_id', '=', website.id).executeTakeFirst()).toBeDefined();
    await start(t.db, website.id);
    expect(await t.db.selectFrom('rollup_relocations').selectAll().where('website_id', '=', website.id).executeTakeFirst()).toBeUndefined();
    t.app.derivedDataWorker.start();
    await t.app.derivedDataWorker.settle();
    expect(await building(t.db, website.id)).toBeUndefined();
    await expectRebuilt(t.db, website.id, 'Asia/Tokyo');
  });
});
