import { DateTime } from 'luxon';
import { type Kysely, sql } from 'kysely';
import { funnelBuilds } from '../src/db/migrations/0040-funnel-builds.ts';
import { expect, it } from 'vitest';
import { readDatabase } from '../src/http/metrics-database.ts';
import { startBuild } from '../src/modules/analytics/derived-build.ts';
import { derivedDataChunk } from '../src/modules/analytics/derived-chunk.ts';
import { funnelBuildChunk } from '../src/modules/analytics/funnel-build.ts';
import type { FunnelStepSpec, MoneyRules } from '../src/modules/stats/event-store.ts';
import { funnelFromCrossings } from '../src/modules/stats/sql/funnel-crossing-reads.ts';
import { funnel as storeFunnel, rawFunnel } from '../src/modules/stats/sql/funnel-sql.ts';
import type { StatsScope } from '../src/modules/stats/stats.params.ts';
import { deriveBacklog } from '../src/modules/analytics/rollup-backlog.ts';
import { useTestApp, writeAndDerive } from './helpers/app.ts';
import { record } from './helpers/derived-sequences.ts';
import { hold, within } from './helpers/held-locks.ts';
import { holdDerivedDataWorker } from './helpers/derived-data-worker.ts';
import { rebuilt, rowsOf } from './helpers/derived-tables.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { newEvent, ownerWithWebsite } from './helpers/factories.ts';
import { FUNNEL_START, funnelTraffic } from './helpers/funnel-traffic.ts';

// A stored funnel created or given other steps on a website with events is built alone in the
// background (src/modules/analytics/funnel-build.ts), a chunk of visitors per transaction. The
// tests hold the worker and run the chunks themselves, writing between them: the funnel's report
// equals the raw report before, during and after its build (from the raw events until it is kept,
// from its sums after), the visitors a chunk passed have exactly a rebuild's rows meanwhile, and
// once kept both tables equal a rebuild; new steps start it again, a delete drops it, a restart
// goes on from its cursor, and a build of the whole website takes it over.

const TABLES = ['funnel_visitor_days', 'funnel_crossings'] as const;
const MONEY: MoneyRules = { currency: 'USD', includeRenewals: true };
const ZONE = 'Europe/Paris';
const PRICING_SIGNUP: FunnelStepSpec[] = [{ type: 'pageview', url: '/pricing' }, { type: 'goal', goalName: 'signup' }];
const A_B_A: FunnelStepSpec[] = [{ type: 'pageview', url: '/a' }, { type: 'pageview', url: '/b' }, { type: 'pageview', url: '/a' }];
const B_PRICING: FunnelStepSpec[] = [{ type: 'pageview', url: '/b' }, { type: 'pageview', url: '/pricing' }];
const START = FUNNEL_START;

describeEachEngine('a stored funnel built alone in the background', (engine) => {
  const t = useTestApp(engine);
  holdDerivedDataWorker(t);

  /** Random traffic of `visitors` visitors (ids from `prefix`) over FUNNEL_DAYS days (test/helpers/funnel-traffic.ts). */
  const traffic = (websiteId: string, seed: number, visitors: number, prefix = 'fb', shiftDays = 0) => funnelTraffic(websiteId, seed, visitors, { prefix, maxEvents: 8, shiftDays });

  async function siteWithTraffic(seed: number) {
    const { owner, website } = await ownerWithWebsite(t);
    const put = await t.request('PUT', `/api/v1/admin/websites/${website.id}`, { token: owner.token, body: { timezone: ZONE } });
    expect(put.status, put.raw).toBe(200);
    await t.app.derivedDataWorker.settle();
    const events = traffic(website.id, seed, 70);
    for (let i = 0; i < events.length; i += 89) await writeAndDerive(t, events.slice(i, i + 89));
    return { owner, website };
  }

  async function createFunnel(token: string, websiteId: string, name: string, steps: FunnelStepSpec[]) {
    const created = await t.request('POST', `/api/v1/admin/websites/${websiteId}/funnels`, { token, body: { name, steps } });
    expect(created.status, created.raw).toBe(200);
    return (created.body as { data: { id: string }[] }).data[0]!.id;
  }

  const buildOf = (websiteId: string, funnelId: string) =>
    t.db.selectFrom('funnel_builds').selectAll().where('website_id', '=', websiteId).where('funnel_id', '=', funnelId).executeTakeFirst();
  const isKept = async (websiteId: string, funnelId: string) =>
    (await t.db.selectFrom('funnel_crossings_kept').select('funnel_id').where('website_id', '=', websiteId).where('funnel_id', '=', funnelId).executeTakeFirst()) !== undefined;
  /** The website's visitors up to the build's cursor (the database compares): its progress. */
  const passedVisitors = async (websiteId: string, cursor: string | null) =>
    cursor === null
      ? 0
      : Number((await sql<{ n: number | string }>`select count(*) as n from visitor_totals where website_id = ${websiteId} and visitor_id <= ${cursor}`.execute(t.db)).rows[0]!.n);
  const chunk = (websiteId: string, limit: number) => t.db.transaction().execute((trx) => funnelBuildChunk(trx, websiteId, limit));

  /** Ranges in ZONE: four whole days, all time, and one cut on both ends (raw). */
  function ranges(websiteId: string): StatsScope[] {
    const local = (day: number, time = '00:00') => DateTime.fromISO(`2026-04-0${day}T${time}`, { zone: ZONE }).toUTC().toISO()!;
    return [
      { websiteId, range: { from: local(2), to: local(6) }, timezone: ZONE, filters: [] },
      { websiteId, range: null, timezone: ZONE, filters: [] },
      { websiteId, range: { from: local(2, '04:00'), to: local(5, '18:00') }, timezone: ZONE, filters: [] },
    ];
  }

  /** The stored funnel's report equals the raw one; from its sums exactly when `kept` (whole-day ranges). */
  async function expectReports(websiteId: string, steps: FunnelStepSpec[], kept: boolean) {
    for (const [i, scope] of ranges(websiteId).entries()) {
      const raw = await rawFunnel(t.db, scope, steps, MONEY);
      expect(await storeFunnel(t.db, scope, steps, MONEY), JSON.stringify(scope)).toEqual(raw);
      const fromSums = await funnelFromCrossings(t.db, scope, steps, MONEY);
      expect(fromSums, JSON.stringify({ scope, kept })).toEqual(kept && i < 2 ? raw : undefined);
    }
  }

  const funnelRows = async (websiteId: string, table: (typeof TABLES)[number], funnelId: string, tables?: Record<string, string[]>) =>
    (tables ? tables[table]! : await rowsOf(t.db, table, websiteId)).filter((row) => (JSON.parse(row) as [string, unknown][]).some(([k, v]) => k === 'funnel_id' && v === funnelId));

  /** `read` run with the funnel marked kept meanwhile (the worker is held: nothing else runs). */
  async function asIfKept<T>(websiteId: string, funnelId: string, read: () => Promise<T>): Promise<T> {
    await t.db.insertInto('funnel_crossings_kept').values({ website_id: websiteId, funnel_id: funnelId }).execute();
    try {
      return await read();
    } finally {
      await t.db.deleteFrom('funnel_crossings_kept').where('website_id', '=', websiteId).where('funnel_id', '=', funnelId).execute();
    }
  }

  /** The visitors the build has passed (the database compares, in its order) have exactly a rebuild's rows of the funnel. */
  async function expectPassedExact(websiteId: string, funnelId: string) {
    const build = await buildOf(websiteId, funnelId);
    if (!build?.cursor) return 0;
    const { rows } = await sql<{ visitor_id: string }>`select distinct visitor_id from events where website_id = ${websiteId} and visitor_id <= ${build.cursor}`.execute(t.db);
    const passed = new Set(rows.map((row) => row.visitor_id));
    const ofPassed = (list: string[]) => list.filter((row) => passed.has((JSON.parse(row) as [string, unknown][]).find(([k]) => k === 'visitor_id')![1] as string));
    // The oracle rebuilds kept funnels: this one as if kept, in a transaction rolled back.
    const again = await asIfKept(websiteId, funnelId, () => rebuilt(t.db, websiteId, ZONE));
    const expected = ofPassed(await funnelRows(websiteId, 'funnel_visitor_days', funnelId, again));
    expect(ofPassed(await funnelRows(websiteId, 'funnel_visitor_days', funnelId))).toEqual(expected);
    return expected.length;
  }

  async function expectRebuilt(websiteId: string, zone = ZONE) {
    const again = await rebuilt(t.db, websiteId, zone);
    for (const table of TABLES) expect(await rowsOf(t.db, table, websiteId), table).toEqual(again[table]);
    expect(again.funnel_crossings!.length).toBeGreaterThan(20);
  }

  it('answers its creation at once, reads raw while it builds with events arriving between chunks, then reads its sums, equal to a rebuild', { timeout: 300_000 }, async () => {
    const { owner, website } = await siteWithTraffic(7);
    const began = performance.now();
    const funnelId = await createFunnel(owner.token, website.id, 'Pricing to signup', PRICING_SIGNUP);
    expect(performance.now() - began, 'the creation does not derive the funnel itself').toBeLessThan(5_000);
    const build = await buildOf(website.id, funnelId);
    expect(build).toMatchObject({ cursor: null, visitors_total: null });
    expect(await isKept(website.id, funnelId)).toBe(false);
    await expectReports(website.id, PRICING_SIGNUP, false);

    const shown = await t.request('GET', `/api/v1/admin/websites/${website.id}/derived-data`, { token: owner.token });
    expect(shown.status, shown.raw).toBe(200);
    expect((shown.body as { data: unknown[] }).data[0]).toMatchObject({ state: 'ready', funnelBuilds: [{ funnelId, visitorsDone: 0, visitorsTotal: null, progress: null }] });

    let chunks = 0;
    let passedRows = 0;
    for (let round = 0; ; round += 1) {
      const result = await chunk(website.id, 9);
      chunks += 1;
      if (result.finished) break;
      const now = (await buildOf(website.id, funnelId))!;
      // Its progress: the website's visitors passed, of all of them (new ones may add to both).
      expect(Number(now.visitors_done)).toBe(await passedVisitors(website.id, now.cursor));
      expect(Number(now.visitors_done)).toBeGreaterThanOrEqual(9 * chunks);
      const metrics = await readDatabase(t.db);
      expect(metrics!.funnelBuilds).toEqual({ funnels: 1, visitorsLeft: Math.max(0, Number(now.visitors_total) - Number(now.visitors_done)) });
      // Between chunks: step events of a visitor passed early (fb-1, among the first ids), of visitors
      // not yet reached and of a new one, on days already kept and later, folded in.
      const late = [
        ...traffic(website.id, 100 + round, 2, 'fb', 1).filter((event) => event.visitorId === 'fb-1'),
        newEvent(website.id, 'fb-9', { occurredAt: new Date(START + (round + 1) * 20 * 3_600_000).toISOString(), path: '/pricing', sessionId: `late-${round}` }),
        newEvent(website.id, `zz-new-${round}`, { occurredAt: new Date(START + 30 * 3_600_000).toISOString(), path: '/pricing', sessionId: `new-${round}` }),
        newEvent(website.id, `zz-new-${round}`, { occurredAt: new Date(START + 31 * 3_600_000).toISOString(), type: 'custom', name: 'signup', path: null, source: 'api', sessionId: null }),
      ];
      await writeAndDerive(t, late);
      if (round === 1) {
        // A server-goal delete mid-build repairs the visitors it touched, passed or not.
        const deleted = await t.request('DELETE', '/api/v1/goals', { token: owner.token, query: { websiteId: website.id, name: 'signup' } });
        expect(deleted.status, deleted.raw).toBe(200);
      }
      passedRows = Math.max(passedRows, await expectPassedExact(website.id, funnelId));
      if (round % 2 === 0) await expectReports(website.id, PRICING_SIGNUP, false);
    }
    expect(chunks, 'the build took several chunks').toBeGreaterThan(3);
    expect(passedRows, 'the passed visitors had rows to compare').toBeGreaterThan(10);
    expect(await buildOf(website.id, funnelId)).toBeUndefined();
    expect(await isKept(website.id, funnelId)).toBe(true);
    await expectReports(website.id, PRICING_SIGNUP, true);
    await expectRebuilt(website.id);

    // Kept: the fold keeps it as before.
    await writeAndDerive(t, traffic(website.id, 31, 20, 'fc', 2));
    await expectRebuilt(website.id);
    await expectReports(website.id, PRICING_SIGNUP, true);
  });

  it('starts again when its steps change mid-build, drops its build when deleted, builds again when revived', { timeout: 300_000 }, async () => {
    const { owner, website } = await siteWithTraffic(11);
    const first = await createFunnel(owner.token, website.id, 'First', PRICING_SIGNUP);
    const second = await createFunnel(owner.token, website.id, 'Second', A_B_A);
    // The oldest build runs first.
    for (let i = 0; i < 2; i += 1) expect(await chunk(website.id, 6)).toEqual({ finished: false, funnelId: first });
    expect(await funnelRows(website.id, 'funnel_visitor_days', first)).not.toEqual([]);

    const changed = await t.request('PUT', `/api/v1/admin/websites/${website.id}/funnels/${first}`, { token: owner.token, body: { steps: B_PRICING } });
    expect(changed.status, changed.raw).toBe(200);
    expect(await buildOf(website.id, first)).toMatchObject({ cursor: null, visitors_done: expect.anything() });
    expect(Number((await buildOf(website.id, first))!.visitors_done)).toBe(0);
    for (const table of TABLES) expect(await funnelRows(website.id, table, first), table).toEqual([]);

    // The second is the oldest now: two chunks of it, then its delete drops its build and rows.
    for (let i = 0; i < 2; i += 1) expect(await chunk(website.id, 6)).toEqual({ finished: false, funnelId: second });
    expect(await funnelRows(website.id, 'funnel_visitor_days', second)).not.toEqual([]);
    const deleted = await t.request('DELETE', `/api/v1/admin/websites/${website.id}/funnels/${second}`, { token: owner.token, body: {} });
    expect(deleted.status, deleted.raw).toBe(200);
    expect(await buildOf(website.id, second)).toBeUndefined();
    for (const table of TABLES) expect(await funnelRows(website.id, table, second), table).toEqual([]);
    await writeAndDerive(t, traffic(website.id, 12, 10, 'fd'));
    for (const table of TABLES) expect(await funnelRows(website.id, table, second), `${table}: the fold leaves a dropped build alone`).toEqual([]);

    for (;;) if ((await chunk(website.id, 6)).finished) break;
    expect(await isKept(website.id, first)).toBe(true);
    expect(await isKept(website.id, second)).toBe(false);
    expect((await chunk(website.id, 6)).finished).toBe(true);
    await expectRebuilt(website.id);
    await expectReports(website.id, B_PRICING, true);
    expect(await funnelFromCrossings(t.db, ranges(website.id)[1]!, PRICING_SIGNUP, MONEY), 'the old steps are no one’s').toBeUndefined();

    const revived = await t.request('PUT', `/api/v1/admin/websites/${website.id}/funnels/${second}`, { token: owner.token, body: { isActive: true } });
    expect(revived.status, revived.raw).toBe(200);
    expect(await buildOf(website.id, second)).toBeDefined();
    await expectReports(website.id, A_B_A, false);
    await t.app.derivedDataWorker.settle();
    expect(await isKept(website.id, second)).toBe(true);
    await expectRebuilt(website.id);
    await expectReports(website.id, A_B_A, true);
  });

  it('goes on from its cursor after a restart, and a build of the whole website takes it over', { timeout: 300_000 }, async () => {
    const { owner, website } = await siteWithTraffic(13);
    const funnelId = await createFunnel(owner.token, website.id, 'Resumed', PRICING_SIGNUP);
    for (let i = 0; i < 3; i += 1) await chunk(website.id, 5);
    const before = (await buildOf(website.id, funnelId))!;
    expect(Number(before.visitors_done)).toBe(await passedVisitors(website.id, before.cursor));
    expect(Number(before.visitors_total)).toBeGreaterThan(Number(before.visitors_done));
    // The worker's own chunk, as after a restart: from the stored cursor, not from the start.
    const result = await t.db.transaction().execute((trx) => derivedDataChunk(trx, website.id, 4));
    expect(result).toMatchObject({ phase: 'funnel', finished: false, funnelId });
    const after = (await buildOf(website.id, funnelId))!;
    expect(Number(after.visitors_done)).toBe(await passedVisitors(website.id, after.cursor));
    expect(Number(after.visitors_done)).toBeGreaterThanOrEqual(Number(before.visitors_done) + 4);
    const { rows } = await sql<{ passed: number | string }>`select count(*) as passed from (select 1 from funnel_visitor_days
      where website_id = ${website.id} and funnel_id = ${funnelId} and visitor_id > ${before.cursor}) v`.execute(t.db);
    expect(Number(rows[0]!.passed), 'the chunk derived visitors past the old cursor').toBeGreaterThan(0);
    await t.app.derivedDataWorker.settle();
    expect(await isKept(website.id, funnelId)).toBe(true);
    await expectRebuilt(website.id);

    // A change of zone mid-build: the move runs first (and moves the building funnel's rows too), the funnel's build after, in the new zone.
    const moved = await createFunnel(owner.token, website.id, 'Moved', B_PRICING);
    await chunk(website.id, 5);
    const put = await t.request('PUT', `/api/v1/admin/websites/${website.id}`, { token: owner.token, body: { timezone: 'Asia/Tokyo' } });
    expect(put.status, put.raw).toBe(200);
    expect(await t.db.transaction().execute((trx) => derivedDataChunk(trx, website.id, 4))).toMatchObject({ phase: 'move' });
    await t.app.derivedDataWorker.settle();
    expect(await isKept(website.id, moved)).toBe(true);
    await expectRebuilt(website.id, 'Asia/Tokyo');
    const back = await t.request('PUT', `/api/v1/admin/websites/${website.id}`, { token: owner.token, body: { timezone: ZONE } });
    expect(back.status, back.raw).toBe(200);
    await t.app.derivedDataWorker.settle();

    // Another funnel mid-build when a build of the whole website starts: the website's build keeps it.
    const other = await createFunnel(owner.token, website.id, 'Taken over', A_B_A);
    await chunk(website.id, 5);
    await t.db.transaction().execute((trx) => startBuild(trx, website.id, 'the test asks for one'));
    expect(await buildOf(website.id, other)).toBeUndefined();
    const status = await t.request('GET', `/api/v1/admin/websites/${website.id}/derived-data`, { token: owner.token });
    expect((status.body as { data: unknown[] }).data[0]).toMatchObject({ state: 'rebuilding', funnelBuilds: [] });
    await t.app.derivedDataWorker.settle();
    expect(await isKept(website.id, other)).toBe(true);
    expect(await isKept(website.id, funnelId)).toBe(true);
    await expectRebuilt(website.id);
    await expectReports(website.id, A_B_A, true);
  });

  it('migration 0040 goes down mid-build dropping the building funnel’s rows only, and up again empty', { timeout: 300_000 }, async () => {
    const { owner, website } = await siteWithTraffic(17);
    const kept = await createFunnel(owner.token, website.id, 'Kept', PRICING_SIGNUP);
    await t.app.derivedDataWorker.settle();
    expect(await isKept(website.id, kept)).toBe(true);
    const building = await createFunnel(owner.token, website.id, 'Building', A_B_A);
    await chunk(website.id, 6);
    expect(await funnelRows(website.id, 'funnel_visitor_days', building)).not.toEqual([]);
    const keptRows = await funnelRows(website.id, 'funnel_crossings', kept);
    const migration = funnelBuilds();
    const untyped = t.db as unknown as Kysely<unknown>;
    await migration.down(untyped);
    for (const table of TABLES) expect(await funnelRows(website.id, table, building), table).toEqual([]);
    expect(await funnelRows(website.id, 'funnel_crossings', kept)).toEqual(keptRows);
    await migration.up(untyped);
    expect(await t.db.selectFrom('funnel_builds').selectAll().execute()).toEqual([]);
    expect(await isKept(website.id, building)).toBe(false);
    await expectRebuilt(website.id);
    await expectReports(website.id, A_B_A, false);
  });

  // PostgreSQL's read committed: an event of a visitor a chunk derives commits after the chunk read
  // the visitor's events and before it commits. Ingestion does not wait for the chunk, and the
  // event counts once: its fold derives that day again after the chunk (SQLite commits one
  // transaction at a time).
  it.skipIf(engine !== 'postgres')('lets an event of a visitor it derives commit mid-chunk, and counts it once', { timeout: 300_000 }, async () => {
    const { owner, website } = await siteWithTraffic(19);
    const funnelId = await createFunnel(owner.token, website.id, 'Mid-chunk', PRICING_SIGNUP);
    await chunk(website.id, 9);
    const { cursor } = (await buildOf(website.id, funnelId))!;
    const { rows } = await sql<{ visitor_id: string }>`select distinct visitor_id from events where website_id = ${website.id} and visitor_id > ${cursor}
      and ((type = 'pageview' and path = '/pricing') or (type = 'custom' and name = 'signup')) order by visitor_id limit 1`.execute(t.db);
    const next = rows[0]!.visitor_id;
    // The chunk derives `next`, then waits to move its cursor on the held row.
    const progress = await hold(t.db, async (trx) => {
      await sql`select 1 from funnel_builds where website_id = ${website.id} and funnel_id = ${funnelId} for update`.execute(trx);
    });
    const running = chunk(website.id, 9);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const late = new Date(START + 5 * 86_400_000 + 3_600_000).toISOString();
    const lateEvents = [
      newEvent(website.id, next, { occurredAt: late, path: '/pricing', sessionId: 'mid-chunk' }),
      newEvent(website.id, next, { occurredAt: new Date(Date.parse(late) + 60_000).toISOString(), type: 'custom', name: 'signup', path: null, source: 'api', sessionId: null }),
    ];
    const waited = await within(record(t, lateEvents), 3_000);
    progress.release();
    await progress.done;
    expect(await running).toEqual({ finished: false, funnelId });
    expect(waited, 'ingestion does not wait for a funnel build').toBe('done');
    await t.db.transaction().execute((trx) => deriveBacklog(trx, website.id));
    for (;;) if ((await chunk(website.id, 9)).finished) break;
    expect(await isKept(website.id, funnelId)).toBe(true);
    await expectRebuilt(website.id);
    await expectReports(website.id, PRICING_SIGNUP, true);
  });
});
