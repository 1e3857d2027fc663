import { DateTime } from 'luxon';
import { expect, it } from 'vitest';
import { recordPayment } from '../src/modules/events/server-events.service.ts';
import { startBuild } from '../src/modules/analytics/derived-build.ts';
import type { FunnelStepSpec, MoneyRules } from '../src/modules/stats/event-store.ts';
import { funnelFromCrossings } from '../src/modules/stats/sql/funnel-crossing-reads.ts';
import { funnel as storeFunnel, rawFunnel } from '../src/modules/stats/sql/funnel-sql.ts';
import type { StatsScope } from '../src/modules/stats/stats.params.ts';
import { type TestApp, useTestApp, writeAndDerive } from './helpers/app.ts';
import { rebuilt, rowsOf } from './helpers/derived-tables.ts';
import { holdDerivedDataWorker } from './helpers/derived-data-worker.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { createAccount, createWebsite } from './helpers/factories.ts';
import { FUNNEL_START, funnelTraffic } from './helpers/funnel-traffic.ts';

// A stored funnel's report from its derived tables (src/modules/analytics/funnel-crossings.ts,
// src/modules/stats/sql/funnel-crossing-reads.ts) must equal the raw report (rawFunnel), visitors
// and revenue at every step, over random traffic with ties and repeated steps, for ranges of whole
// local days and ranges that cut their first or last day, and both tables must equal a rebuild
// from the raw events: after the funnels' own builds (funnels created on a website with events are
// built alone in the background, test/funnel-build.test.ts, their reports raw until then), after a
// build of the website that takes over a funnel's, after folds of new and late
// events, after a server-goal delete, after a change of steps and after a change of zone.

const TABLES = ['funnel_visitor_days', 'funnel_crossings'] as const;
const MONEY: MoneyRules = { currency: 'USD', includeRenewals: true };
const FUNNELS = [
  [{ type: 'pageview', url: '/pricing' }, { type: 'goal', goalName: 'signup' }],
  [{ type: 'pageview', url: '/a' }, { type: 'pageview', url: '/b' }, { type: 'pageview', url: '/a' }],
  [{ type: 'pageview', url: 'https://shop.example.com/pricing?x=1' }, { type: 'pageview', url: '/pricing' }, { type: 'goal', goalName: 'signup' }],
  [{ type: 'goal', goalName: 'signup' }, { type: 'pageview', url: '/b' }, { type: 'goal', goalName: 'signup' }, { type: 'pageview', url: '/pricing' }],
] as const;
const START = FUNNEL_START;

describeEachEngine('the funnel per stored funnel from its first crossings', (engine) => {
  const t = useTestApp(engine);
  // Held, so a funnel's build runs when the test settles the worker, not while it reads.
  holdDerivedDataWorker(t);

  /** Random traffic of `visitors` visitors over FUNNEL_DAYS days from FUNNEL_START + `shiftDays` (test/helpers/funnel-traffic.ts). */
  const traffic = (websiteId: string, seed: number, visitors: number, shiftDays = 0) => funnelTraffic(websiteId, seed, visitors, { prefix: 'fv', maxEvents: 10, shiftDays });

  async function funnelIds(token: string, websiteId: string): Promise<string[]> {
    const ids: string[] = [];
    for (const [i, steps] of FUNNELS.entries()) {
      const created = await t.request('POST', `/api/v1/admin/websites/${websiteId}/funnels`, { token, body: { name: `Funnel ${i}`, steps } });
      expect(created.status, created.raw).toBe(200);
      ids.push((created.body as { data: { id: string }[] }).data[0]!.id);
    }
    return ids;
  }

  /** Ranges in `zone`: whole days, cut first, cut last (events after it that day), cut both, one day cut (raw), all time, and one ending after the latest event. */
  function ranges(zone: string) {
    const local = (day: number, time = '00:00') => DateTime.fromISO(`2026-04-0${day}T${time}`, { zone }).toUTC().toISO()!;
    return [
      { range: { from: local(1), to: local(5) }, tables: true, whole: true },
      { range: { from: local(2, '13:37'), to: local(6) }, tables: true, whole: false },
      { range: { from: local(1), to: local(5, '02:15') }, tables: true, whole: false },
      { range: { from: local(2, '04:00'), to: local(5, '18:00') }, tables: true, whole: false },
      { range: { from: local(3, '01:00'), to: local(4, '23:00') }, tables: true, whole: false },
      { range: { from: local(3, '01:00'), to: local(3, '18:00') }, tables: false, whole: false },
      // Ends after the latest event: its last day is whole so far.
      { range: { from: local(2), to: '2026-05-01T00:01:00.000Z' }, tables: true, whole: true },
      { range: { from: local(2, '09:30'), to: '2026-05-01T00:01:00.000Z' }, tables: true, whole: false },
      { range: null, tables: true, whole: true },
    ];
  }

  async function expectAnswers(websiteId: string, zone: string, funnels = FUNNELS as unknown as FunnelStepSpec[][]) {
    let paid = 0;
    for (const { range, tables, whole } of ranges(zone)) {
      const scope: StatsScope = { websiteId, range, timezone: zone, filters: [] };
      for (const steps of funnels) {
        const label = JSON.stringify({ zone, range, steps });
        const raw = await rawFunnel(t.db, scope, steps, MONEY);
        const fromTables = await funnelFromCrossings(t.db, scope, steps, MONEY, { correctCutDays: true });
        if (tables) expect(fromTables, label).toEqual(raw);
        else expect(fromTables, label).toBeUndefined();
        // The reads correct no cut day: those ranges stay raw, the others come from the tables.
        const planned = await funnelFromCrossings(t.db, scope, steps, MONEY);
        expect(planned, label).toEqual(whole ? raw : undefined);
        expect(await storeFunnel(t.db, scope, steps, MONEY), label).toEqual(raw);
        paid += raw.at(-1)!.revenueMinor;
      }
    }
    // Another zone: the raw events answer.
    const other = zone === 'UTC' ? 'Asia/Tokyo' : 'UTC';
    expect(await funnelFromCrossings(t.db, { websiteId, range: null, timezone: other, filters: [] }, FUNNELS[0] as unknown as FunnelStepSpec[], MONEY)).toBeUndefined();
    expect(paid).toBeGreaterThan(0);
  }

  async function expectRebuilt(websiteId: string, zone: string) {
    const again = await rebuilt(t.db, websiteId, zone);
    const kept: Record<string, string[]> = {};
    for (const table of TABLES) {
      kept[table] = await rowsOf(t.db, table, websiteId);
      expect(kept[table], table).toEqual(again[table]);
    }
    expect(kept.funnel_crossings!.length).toBeGreaterThan(50);
    return kept;
  }

  async function settled(app: TestApp) {
    await app.app.derivedDataWorker.settle();
  }

  /** A build of the website's derived data (as `sightline admin rebuild-website` starts one), run to its end. */
  async function buildAgain(websiteId: string) {
    await t.db.transaction().execute((trx) => startBuild(trx, websiteId, 'the test asks for one'));
    await settled(t);
    expect(await t.db.selectFrom('derived_builds').select('website_id').where('website_id', '=', websiteId).executeTakeFirst()).toBeUndefined();
  }

  it('answers as the raw report and equals a rebuild through builds, folds, a delete, new steps and a new zone', { timeout: 600_000 }, async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const zone = 'Europe/Paris';
    const put = await t.request('PUT', `/api/v1/admin/websites/${website.id}`, { token: owner.token, body: { timezone: zone } });
    expect(put.status, put.raw).toBe(200);
    await settled(t);
    // Events first, then the funnels: no build of the website starts, each funnel's own does; they
    // are not kept until those end, their reports read the raw events meanwhile.
    const first = traffic(website.id, 7, 90);
    for (let i = 0; i < first.length; i += 97) await writeAndDerive(t, first.slice(i, i + 97));
    const ids = await funnelIds(owner.token, website.id);
    const allTime: StatsScope = { websiteId: website.id, range: null, timezone: zone, filters: [] };
    expect(await t.db.selectFrom('derived_builds').select('website_id').where('website_id', '=', website.id).executeTakeFirst()).toBeUndefined();
    for (const steps of FUNNELS as unknown as FunnelStepSpec[][]) {
      expect(await funnelFromCrossings(t.db, allTime, steps, MONEY)).toBeUndefined();
      expect(await storeFunnel(t.db, allTime, steps, MONEY)).toEqual(await rawFunnel(t.db, allTime, steps, MONEY));
    }
    expect(await t.db.selectFrom('funnel_crossings').select('website_id').where('website_id', '=', website.id).executeTakeFirst()).toBeUndefined();
    expect(await t.db.selectFrom('funnel_builds').select('funnel_id').where('website_id', '=', website.id).execute()).toHaveLength(FUNNELS.length);
    await settled(t);
    expect(await t.db.selectFrom('funnel_crossings_kept').select('funnel_id').where('website_id', '=', website.id).execute()).toHaveLength(FUNNELS.length);
    await expectRebuilt(website.id, zone);

    // Folds: later events and late ones on earlier days, in small batches; payments.
    const second = traffic(website.id, 11, 120, 1);
    for (let i = 0; i < second.length; i += 53) await writeAndDerive(t, second.slice(i, i + 53));
    for (const [i, visitor] of ['fv-1', 'fv-2', 'fv-5', 'fv-8', 'fv-13', 'fv-21', 'fv-34', 'fv-99'].entries()) {
      await recordPayment(t.db, website.id, { transaction_id: `tx-${i}`, amount: 10 + i, currency: 'USD', datafast_visitor_id: visitor, timestamp: new Date(START + i * 17 * 3_600_000).toISOString() });
    }
    const folded = await expectRebuilt(website.id, zone);
    await expectAnswers(website.id, zone);

    // A server-goal delete repairs the visitors it touched.
    const deleted = await t.request('DELETE', '/api/v1/goals', { token: owner.token, query: { websiteId: website.id, name: 'signup' } });
    expect(deleted.status, deleted.raw).toBe(200);
    const repaired = await expectRebuilt(website.id, zone);
    expect(repaired).not.toEqual(folded);
    await expectAnswers(website.id, zone);

    // New steps: the funnel's rows go and it is not kept until its build ends (here a build of the
    // whole website, which takes the funnel's over); neither its old steps nor its new ones answer
    // from the tables meanwhile.
    const changed = await t.request('PUT', `/api/v1/admin/websites/${website.id}/funnels/${ids[1]}`, { token: owner.token, body: { steps: [{ type: 'pageview', url: '/b' }, { type: 'pageview', url: '/a' }] } });
    expect(changed.status, changed.raw).toBe(200);
    await expectRebuilt(website.id, zone);
    const scope: StatsScope = { websiteId: website.id, range: null, timezone: zone, filters: [] };
    const swapped: FunnelStepSpec[] = [{ type: 'pageview', url: '/b' }, { type: 'pageview', url: '/a' }];
    expect(await funnelFromCrossings(t.db, scope, FUNNELS[1] as unknown as FunnelStepSpec[], MONEY)).toBeUndefined();
    expect(await funnelFromCrossings(t.db, scope, swapped, MONEY)).toBeUndefined();
    expect(await storeFunnel(t.db, scope, swapped, MONEY)).toEqual(await rawFunnel(t.db, scope, swapped, MONEY));
    await buildAgain(website.id);
    await expectRebuilt(website.id, zone);
    expect(await funnelFromCrossings(t.db, scope, FUNNELS[1] as unknown as FunnelStepSpec[], MONEY)).toBeUndefined();
    expect(await funnelFromCrossings(t.db, scope, swapped, MONEY)).toEqual(await rawFunnel(t.db, scope, swapped, MONEY));

    // A new zone moves every visitor's days.
    const moved = await t.request('PUT', `/api/v1/admin/websites/${website.id}`, { token: owner.token, body: { timezone: 'UTC' } });
    expect(moved.status, moved.raw).toBe(200);
    await settled(t);
    await expectRebuilt(website.id, 'UTC');
    const third = traffic(website.id, 13, 60, 2);
    for (let i = 0; i < third.length; i += 71) await writeAndDerive(t, third.slice(i, i + 71));
    await expectRebuilt(website.id, 'UTC');
    await expectAnswers(website.id, 'UTC', (FUNNELS as unknown as FunnelStepSpec[][]).map((steps, i) => (i === 1 ? swapped : steps)));
  });
});
