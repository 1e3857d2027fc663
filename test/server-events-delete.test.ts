import { randomBytes } from 'node:crypto';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { PERMISSIONS } from '../src/auth/permissions.ts';
import { rebuildBreakdownRollups, repairBreakdownRollups, subtractDeletedEvents } from '../src/modules/analytics/breakdown-rollups.ts';
import { rebuildDailyRollups } from '../src/modules/analytics/rollup-rebuild.ts';
import { rebuildVisitorRollups } from '../src/modules/analytics/visitor-rollup-repair.ts';
import { recountGoalStats } from '../src/modules/goals/goal-stats.ts';
import type { NewEvent } from '../src/modules/events/event.types.ts';
import { type TestApp, settleRollups, useTestApp } from './helpers/app.ts';
import { describeEachEventEngine, eventsOnClickHouse, itWithRelationalRollups } from './helpers/clickhouse.ts';
import { UNKNOWN_ID, addMember, createAccount, createApiKey, createToken, createWebsite, expectError, newEvent } from './helpers/factories.ts';

// DELETE /api/v1/goals and DELETE /api/v1/payments: only server-recorded rows go, at least one
// filter, days in the website's time zone (Europe/Paris here), and every rollup afterwards is
// what a rebuild from the remaining raw events gives.

const GOALS = '/api/v1/goals';
const PAYMENTS = '/api/v1/payments';
const TIMESERIES = '/api/v1/analytics/timeseries';
const ZONE = 'Europe/Paris';
const allBut = (permission: string) => PERMISSIONS.filter((p) => p !== permission);
const visitor = () => `visitor-${randomBytes(6).toString('hex')}`;

const pageview = (websiteId: string, visitorId: string, occurredAt: string): NewEvent =>
  newEvent(websiteId, visitorId, { occurredAt, sessionId: `s-${visitorId}-${occurredAt.slice(0, 10)}` });
const browserGoal = (websiteId: string, visitorId: string, name: string, occurredAt: string): NewEvent =>
  newEvent(websiteId, visitorId, { type: 'custom', name, path: null, occurredAt, sessionId: `s-${visitorId}-${occurredAt.slice(0, 10)}` });
/** A goal as POST /api/v1/goals records it (no session, source api), at a chosen time. */
const serverGoal = (websiteId: string, visitorId: string, name: string, occurredAt: string): NewEvent =>
  newEvent(websiteId, visitorId, { type: 'custom', name, path: null, sessionId: null, source: 'api', occurredAt });

const localDay = (iso: string) => DateTime.fromISO(iso, { zone: 'utc' }).setZone(ZONE).toISODate()!;

describeEachEventEngine('deleting server-side goals and payments', (engine) => {
  const t: TestApp = useTestApp(engine);

  /**
   * Four visitors over 2-5 March 2026 (Paris is UTC+1): v1 has server goals on two days and a
   * browser goal of the same name; v2's only event on 5 March (Paris) is a server goal sent at
   * 23:30 UTC on the 4th; v3 has a browser and a server goal; v4 only a pageview.
   */
  async function seeded() {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const key = (await createApiKey(t, owner.token, website.id)).key;
    const [v1, v2, v3, v4] = [visitor(), visitor(), visitor(), visitor()];
    const w = website.id;
    const events = [
      pageview(w, v1, '2026-03-02T10:00:00.000Z'),
      serverGoal(w, v1, 'signup', '2026-03-02T11:00:00.000Z'),
      pageview(w, v2, '2026-03-02T12:00:00.000Z'),
      pageview(w, v3, '2026-03-03T08:00:00.000Z'),
      browserGoal(w, v3, 'purchase', '2026-03-03T08:05:00.000Z'),
      serverGoal(w, v3, 'signup', '2026-03-03T09:00:00.000Z'),
      pageview(w, v4, '2026-03-03T10:00:00.000Z'),
      serverGoal(w, v1, 'signup', '2026-03-03T22:30:00.000Z'),
      browserGoal(w, v1, 'signup', '2026-03-04T09:00:00.000Z'),
      serverGoal(w, v2, 'purchase', '2026-03-04T23:30:00.000Z'),
    ];
    await t.app.events.write(events);
    await expectRollupsConsistent(w);
    return { owner, website, key, v1, v2, v3, v4 };
  }

  const del = (url: string, token: string, query: Record<string, string>) => t.request('DELETE', url, { token, query });

  async function ok(url: string, token: string, query: Record<string, string>) {
    const response = await del(url, token, query);
    expect(response.status, response.raw).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(['data', 'status']);
    expect(response.body.data).toHaveLength(1);
    return response.body.data[0] as { message: string; deleted: number; [applied: string]: unknown };
  }

  const eventsOf = async (websiteId: string) =>
    (await t.storedEvents(websiteId))
      .map(({ id, type, name, visitor_id, source, occurred_at }) => ({ id, type, name, visitor_id, source, occurred_at }))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

  /** The rollup rows of a website, comparable across engines. */
  async function rollups(websiteId: string) {
    await settleRollups(t)(websiteId);
    const sorted = (rows: object[]) => rows.map((row) => JSON.stringify(Object.entries(row).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v]))).sort();
    const of = (table: 'visitor_days' | 'daily_totals' | 'visitor_recency' | 'breakdown_visitors' | 'breakdown_totals' | 'breakdown_days') =>
      t.db.selectFrom(table).selectAll().where('website_id', '=', websiteId).execute();
    // A day whose visitors all came back later keeps a row of 0, which a rebuild has no row for.
    const lastDays = await t.db.selectFrom('breakdown_last_days').selectAll().where('website_id', '=', websiteId).where('visitors', '<>', 0).execute();
    // Likewise a key whose paying visitors left it keeps a revenue row of 0.
    const revenue = await t.db.selectFrom('breakdown_revenue').selectAll().where('website_id', '=', websiteId).where('minor', '<>', 0).execute();
    const profileRevenue = await t.db.selectFrom('breakdown_profile_revenue').selectAll().where('website_id', '=', websiteId).where('minor', '<>', 0).execute();
    return {
      visitor_days: sorted(await of('visitor_days')),
      daily_totals: sorted(await of('daily_totals')),
      visitor_recency: sorted(await of('visitor_recency')),
      breakdown_visitors: sorted(await of('breakdown_visitors')),
      breakdown_totals: sorted(await of('breakdown_totals')),
      breakdown_days: sorted(await of('breakdown_days')),
      breakdown_last_days: sorted(lastDays),
      breakdown_revenue: sorted(revenue),
      breakdown_profile_revenue: sorted(profileRevenue),
    };
  }

  /** The day rollups equal a rebuild from the raw events; goal_stats and goal_visitors equal the raw goals. */
  async function expectRollupsConsistent(websiteId: string) {
    // ClickHouse keeps no day rollups: it derives days and visitors from the raw events at read time.
    if (!eventsOnClickHouse(engine)) {
      const before = await rollups(websiteId);
      await t.db.transaction().execute(async (trx) => {
        await rebuildDailyRollups(trx, websiteId, ZONE);
        await rebuildBreakdownRollups(trx, websiteId);
      });
      expect(before).toEqual(await rollups(websiteId));
    }

    const goals = (await eventsOf(websiteId)).filter((e) => e.type === 'custom' && e.name !== null);
    const expected = new Map<string, { completions: number; visitors: Set<string>; last: string }>();
    for (const e of goals) {
      const entry = expected.get(e.name!) ?? { completions: 0, visitors: new Set<string>(), last: '' };
      entry.completions += 1;
      entry.visitors.add(e.visitor_id);
      const at = new Date(e.occurred_at).toISOString();
      if (at > entry.last) entry.last = at;
      expected.set(e.name!, entry);
    }
    const stats = await t.db.selectFrom('goal_stats').selectAll().where('website_id', '=', websiteId).execute();
    expect(
      Object.fromEntries(stats.map((s) => [s.goal_name, [Number(s.completions), Number(s.visitors), new Date(s.last_completed_at).toISOString()]])),
    ).toEqual(Object.fromEntries([...expected].map(([name, e]) => [name, [e.completions, e.visitors.size, e.last]])));
    const pairs = await t.db.selectFrom('goal_visitors').select(['goal_name', 'visitor_id']).where('website_id', '=', websiteId).execute();
    expect(pairs.map((p) => `${p.goal_name}/${p.visitor_id}`).sort()).toEqual(
      [...expected].flatMap(([name, e]) => [...e.visitors].map((v) => `${name}/${v}`)).sort(),
    );
  }

  /** The tracked-goals list and the time series agree with what the remaining raw events say. */
  async function expectReadsMatchRawEvents(websiteId: string, token: string) {
    const remaining = await eventsOf(websiteId);
    const goals = remaining.filter((e) => e.type === 'custom' && e.name !== null);

    const tracked = await t.request('GET', `/api/v1/admin/websites/${websiteId}/goals`, { token });
    expect(tracked.status, tracked.raw).toBe(200);
    const byName = new Map<string, { completions: number; visitors: Set<string> }>();
    for (const e of goals) {
      const entry = byName.get(e.name!) ?? { completions: 0, visitors: new Set() };
      entry.completions += 1;
      entry.visitors.add(e.visitor_id);
      byName.set(e.name!, entry);
    }
    expect(Object.fromEntries(tracked.body.data.map((g: any) => [g.goalName, [g.completions, g.visitors]]))).toEqual(
      Object.fromEntries([...byName].map(([name, e]) => [name, [e.completions, e.visitors.size]])),
    );

    const query = { websiteId, fields: 'visitors,conversion_rate', startAt: '2026-03-01', endAt: '2026-03-06' };
    const days = await t.request('GET', TIMESERIES, { token, query: { ...query, interval: 'day' } });
    const hours = await t.request('GET', TIMESERIES, { token, query: { ...query, interval: 'hour' } });
    expect(days.status, days.raw).toBe(200);
    expect(hours.status, hours.raw).toBe(200);
    const perDay = new Map<string, { visitors: Set<string>; converted: Set<string> }>();
    for (const e of remaining) {
      const day = localDay(new Date(e.occurred_at).toISOString());
      const entry = perDay.get(day) ?? { visitors: new Set(), converted: new Set() };
      entry.visitors.add(e.visitor_id);
      if (e.type === 'custom' && e.name !== null) entry.converted.add(e.visitor_id);
      perDay.set(day, entry);
    }
    const rate = (converted: number, visitors: number) => (visitors === 0 ? 0 : Math.round((converted / visitors) * 10_000) / 100);
    for (const bucket of days.body.data) {
      const day = (bucket.timestamp as string).slice(0, 10);
      const expected = perDay.get(day);
      expect([day, bucket.visitors, bucket.conversion_rate]).toEqual([
        day,
        expected?.visitors.size ?? 0,
        rate(expected?.converted.size ?? 0, expected?.visitors.size ?? 0),
      ]);
    }
    const allVisitors = new Set(remaining.map((e) => e.visitor_id));
    const allConverted = new Set(goals.map((e) => e.visitor_id));
    const totals = { visitors: allVisitors.size, conversion_rate: rate(allConverted.size, allVisitors.size) };
    expect(days.body.totals).toEqual(totals);
    // The hour series counts the raw events, the day series the rollups: both agree.
    expect(hours.body.totals).toEqual(totals);
  }

  describe('DELETE /api/v1/goals', () => {
    it('deletes the server goals of a name with the df_ key, keeps browser goals, and leaves every rollup consistent', async () => {
      const { website, key, v1, v3 } = await seeded();
      const before = await eventsOf(website.id);
      const result = await ok(GOALS, key, { name: 'signup' });
      // The documented row: the filters applied beside the count, no key for a filter not sent.
      expect(result).toEqual({ message: 'Deleted 3 server-side goals', deleted: 3, goal_name: 'signup' });

      const after = await eventsOf(website.id);
      const gone = before.filter((e) => !after.some((a) => a.id === e.id));
      expect(gone.map((e) => [e.name, e.source, e.visitor_id]).sort()).toEqual(
        [['signup', 'api', v1], ['signup', 'api', v1], ['signup', 'api', v3]].sort(),
      );
      // The browser goal of the same name and visitor stays.
      expect(after.filter((e) => e.name === 'signup').map((e) => [e.source, e.visitor_id])).toEqual([['browser', v1]]);
      await expectRollupsConsistent(website.id);
      await expectReadsMatchRawEvents(website.id, key);
    });

    it('removes a goal with no completion left from the tracked goals and from the conversion rate', async () => {
      const { owner, website, key, v2 } = await seeded();
      expect((await ok(GOALS, owner.token, { websiteId: website.id, datafast_visitor_id: v2 })).deleted).toBe(1);
      // v2's only event on 5 March (Paris) was that goal: the day has no visitor left.
      // (ClickHouse keeps no daily_totals: it derives days from the raw events at read time.)
      if (!eventsOnClickHouse(engine)) {
        const totals = await t.db.selectFrom('daily_totals').select('day').where('website_id', '=', website.id).execute();
        expect(totals.map((r) => r.day).sort()).toEqual(['2026-03-02', '2026-03-03', '2026-03-04']);
      }
      await expectRollupsConsistent(website.id);
      await expectReadsMatchRawEvents(website.id, key);

      // Now every purchase left is a browser one; deleting signup leaves only browser goals.
      await ok(GOALS, key, { goalName: 'signup' });
      const tracked = await t.request('GET', `/api/v1/admin/websites/${website.id}/goals`, { token: key });
      expect(tracked.body.data.map((g: any) => [g.goalName, g.completions])).toEqual([
        ['purchase', 1],
        ['signup', 1],
      ]);
      await expectRollupsConsistent(website.id);
      await expectReadsMatchRawEvents(website.id, key);
    });

    it('takes a goal that exists only server-side out of the tracked goals list, all time and over a period', async () => {
      const { website, key, v4 } = await seeded();
      const sent = await t.request('POST', GOALS, { token: key, body: { datafast_visitor_id: v4, name: 'Demo Booked' } });
      expect(sent.status, sent.raw).toBe(200);
      const listed = async (query: Record<string, string> = {}) =>
        (await t.request('GET', `/api/v1/admin/websites/${website.id}/goals`, { token: key, query })).body.data.map((g: any) => g.goalName);
      expect(await listed()).toContain('demo_booked');
      expect((await ok(GOALS, key, { name: ' Demo Booked ' })).deleted).toBe(1);
      expect(await listed()).not.toContain('demo_booked');
      const today = DateTime.now().setZone(ZONE).toISODate()!;
      expect(await listed({ startAt: today, endAt: today })).not.toContain('demo_booked');
      await expectRollupsConsistent(website.id);
    });

    it("reads days in the website's time zone: startAt's day start to endAt's day end", async () => {
      const { website, key, v1, v2, v3 } = await seeded();
      // 4 March in Paris: v1's browser goal (kept) only; v2's 23:30 UTC goal is 5 March in Paris.
      expect((await ok(GOALS, key, { startAt: '2026-03-04', endAt: '2026-03-04' })).deleted).toBe(0);
      // 3 March in Paris holds v3's server goal and v1's goal of 22:30 UTC (23:30 in Paris).
      const visitorDay = await ok(GOALS, key, { start: '2026-03-03', end: '2026-03-03', datafast_visitor_id: v1 });
      // The day as the period it stood for: from midnight in Paris to the last millisecond before the next.
      expect(visitorDay).toEqual({
        message: 'Deleted 1 server-side goal',
        deleted: 1,
        datafast_visitor_id: v1,
        timeRange: { start: '2026-03-02T23:00:00.000Z', end: '2026-03-03T22:59:59.999Z' },
      });
      expect(await ok(GOALS, key, { startAt: '2026-03-05', endAt: '2026-03-05' })).toEqual({
        message: 'Deleted 1 server-side goal',
        deleted: 1,
        timeRange: { start: '2026-03-04T23:00:00.000Z', end: '2026-03-05T22:59:59.999Z' },
      });
      const left = (await eventsOf(website.id)).filter((e) => e.source === 'api');
      expect(left.map((e) => [e.visitor_id, e.occurred_at.slice(0, 10)]).sort()).toEqual(
        [[v1, '2026-03-02'], [v3, '2026-03-03']].sort(),
      );
      expect(left.some((e) => e.visitor_id === v2)).toBe(false);
      await expectRollupsConsistent(website.id);
      await expectReadsMatchRawEvents(website.id, key);
    });

    it('accepts ISO instants as bounds, endAt included', async () => {
      const { website, key } = await seeded();
      const result = await ok(GOALS, key, { startAt: '2026-03-02T11:00:00Z', endAt: '2026-03-03T09:00:00.000Z', goalName: 'Sign Up' });
      expect(result.deleted).toBe(0);
      expect(result).toMatchObject({ goal_name: 'sign_up', timeRange: { start: '2026-03-02T11:00:00.000Z', end: '2026-03-03T09:00:00.000Z' } });
      const all = await ok(GOALS, key, { startAt: '2026-03-02T11:00:00Z', endAt: '2026-03-03T09:00:00.000Z' });
      expect(all).toEqual({
        message: 'Deleted 2 server-side goals',
        deleted: 2,
        timeRange: { start: '2026-03-02T11:00:00.000Z', end: '2026-03-03T09:00:00.000Z' },
      });
      await expectRollupsConsistent(website.id);
    });

    it('deletes nothing and answers deleted: 0 when nothing matches, or the name is only a browser goal', async () => {
      const { website, key } = await seeded();
      const before = await rollups(website.id);
      expect(await ok(GOALS, key, { name: 'nothing_like_it' })).toEqual({ message: 'Deleted 0 server-side goals', deleted: 0, goal_name: 'nothing_like_it' });
      // purchase has one server completion (v2) and one browser one: only the server one goes.
      expect((await ok(GOALS, key, { name: 'purchase' })).deleted).toBe(1);
      expect((await ok(GOALS, key, { name: 'purchase' })).deleted).toBe(0);
      expect((await eventsOf(website.id)).filter((e) => e.name === 'purchase').map((e) => e.source)).toEqual(['browser']);
      // ClickHouse keeps no day rollups (it derives them from the raw events at read time).
      if (!eventsOnClickHouse(engine)) expect(await rollups(website.id)).not.toEqual(before);
      await expectRollupsConsistent(website.id);
    });

    // The relational rollup repair only: ClickHouse keeps no rollups (it derives them from the raw events at read time).
    itWithRelationalRollups(engine)('repairs the rollups visitor by visitor exactly as a full rebuild would, for several visitors at once', async () => {
      // The route rebuilds the whole website when a third or more of its visitors are touched;
      // the per-visitor repair is checked here on its own, with most visitors touched.
      const { website, v1, v2, v3 } = await seeded();
      await t.db.transaction().execute(async (trx) => {
        const doomed = await trx.selectFrom('events').select(['id', 'occurred_at']).where('website_id', '=', website.id).where('source', '=', 'api').execute();
        await subtractDeletedEvents(trx, website.id, ZONE, doomed.map((row) => ({ id: row.id, occurredAt: new Date(row.occurred_at as unknown as string).toISOString() })));
        const gone = await trx.deleteFrom('events').where('website_id', '=', website.id).where('source', '=', 'api').returning(['name', 'visitor_id']).execute();
        expect(gone).toHaveLength(4);
        await rebuildVisitorRollups(trx, website.id, ZONE, [v1, v2, v3, v1]);
        await repairBreakdownRollups(trx, website.id, ZONE, [v1, v2, v3, v1]);
        await recountGoalStats(trx, website.id, gone.map((row) => row.name!), gone.map((row) => row.visitor_id));
      });
      await expectRollupsConsistent(website.id);
    });

    it('keeps the alert history of deleted goals', async () => {
      const { owner, website, key, v4 } = await seeded();
      const alert = await t.request('POST', `/api/v1/admin/websites/${website.id}/alerts`, {
        token: owner.token,
        body: { name: 'Sign-ups', trigger: { goalName: 'signup' }, template: { message: 'Someone signed up.' } },
      });
      expect(alert.status, alert.raw).toBe(200);
      expect((await t.request('POST', GOALS, { token: key, body: { datafast_visitor_id: v4, name: 'signup' } })).status).toBe(200);
      const history = () => t.db.selectFrom('alert_history').select(['id', 'goal_name', 'visitor_id']).where('website_id', '=', website.id).execute();
      const before = await history();
      expect(before).toHaveLength(1);
      expect((await ok(GOALS, key, { name: 'signup' })).deleted).toBe(4);
      expect(await history()).toEqual(before);
    });

    it('accepts an account token with goals:write, and a member', async () => {
      const { owner, website, v1 } = await seeded();
      const token = await createToken(t, owner, ['goals:write'], [website.id]);
      expect((await ok(GOALS, token, { websiteId: website.id, datafast_visitor_id: v1, name: 'signup' })).deleted).toBe(2);
      const member = await createAccount(t);
      await addMember(t, website.id, member.id, 'member');
      expect((await ok(GOALS, member.token, { websiteId: website.id, name: 'signup' })).deleted).toBe(1);
      await expectRollupsConsistent(website.id);
    });

    it("names the website by its trackingId as well as by its id", async () => {
      const { owner, website } = await seeded();
      expect((await ok(GOALS, owner.token, { websiteId: website.trackingId, name: 'signup' })).deleted).toBe(3);
      expect((await ok(PAYMENTS, owner.token, { websiteId: website.trackingId, transaction_id: 'none' })).deleted).toBe(0);
      await expectRollupsConsistent(website.id);
    });

    it('answers 401 without a credential or with an unknown one, and deletes nothing', async () => {
      const { website } = await seeded();
      const before = await eventsOf(website.id);
      const missing = await t.request('DELETE', GOALS, { query: { websiteId: website.id, name: 'signup' } });
      expectError(missing, 401);
      expect(String(missing.headers['www-authenticate'])).toMatch(/^Bearer/);
      expectError(await del(GOALS, 'dft_nope', { websiteId: website.id, name: 'signup' }), 401);
      expect(await eventsOf(website.id)).toEqual(before);
    });

    it('answers 403 without goals:write, for a token of another website, a viewer and a df_ key of another website', async () => {
      const { owner, website } = await seeded();
      const before = await eventsOf(website.id);
      const query = { websiteId: website.id, name: 'signup' };
      expectError(await del(GOALS, await createToken(t, owner, allBut('goals:write')), query), 403, /goals:write/);
      const other = await createWebsite(t, owner.token);
      expectError(await del(GOALS, await createToken(t, owner, ['goals:write'], [other.id]), query), 403, /not allowed/);
      const viewer = await createAccount(t);
      await addMember(t, website.id, viewer.id, 'viewer');
      expectError(await del(GOALS, viewer.token, query), 403, /viewer/);
      expectError(await del(GOALS, (await createApiKey(t, owner.token, other.id)).key, query), 403, /another website/);
      expect(await eventsOf(website.id)).toEqual(before);
    });

    it("answers 404 for another account's website and an unknown one, even with bad filters", async () => {
      const { website } = await seeded();
      const before = await eventsOf(website.id);
      const stranger = await createAccount(t);
      expectError(await del(GOALS, stranger.token, { websiteId: website.id, name: 'signup' }), 404);
      expectError(await del(GOALS, stranger.token, { websiteId: website.id }), 404);
      expectError(await del(GOALS, stranger.token, { websiteId: UNKNOWN_ID, name: 'signup' }), 404);
      expect(await eventsOf(website.id)).toEqual(before);
    });

    const bad: [string, Record<string, string>, RegExp][] = [
      ['no filter at all', {}, /query: send at least one filter/],
      ['startAt without endAt', { startAt: '2026-03-02' }, /query\.endAt: is required/],
      ['end without start', { end: '2026-03-02' }, /query\.startAt: is required/],
      ['a bad day', { startAt: '2026-02-30', endAt: '2026-03-02' }, /query\.startAt: must be a YYYY-MM-DD day/],
      ['a bad end spelled end', { start: '2026-03-01', end: 'tomorrow' }, /query\.end: must be a YYYY-MM-DD day/],
      ['endAt before startAt', { startAt: '2026-03-04', endAt: '2026-03-02' }, /query\.endAt: must not be before startAt/],
      ['name and goalName that differ', { name: 'signup', goalName: 'purchase' }, /query\.goalName: is another spelling of name/],
      ['startAt and start that differ', { startAt: '2026-03-01', start: '2026-03-02', endAt: '2026-03-04' }, /query\.start: is another spelling of startAt/],
      ['a name that breaks the rules once normalised', { name: 'Identify' }, /query\.name: after normalising/],
      ['a goalName with a dot', { goalName: 'sign.up' }, /query\.goalName: after normalising/],
      ['an empty name', { name: '' }, /query\.name/],
      ['an empty visitor id', { datafast_visitor_id: '' }, /query\.datafast_visitor_id/],
      ['a visitor id with a NUL character', { datafast_visitor_id: 'a\u0000b' }, /query\.datafast_visitor_id/],
      ['an unknown parameter', { name: 'signup', source: 'api' }, /query\.source: is not an allowed field/],
    ];
    for (const [label, query, pattern] of bad) {
      it(`answers 400 for ${label}, naming the field, and deletes nothing`, async () => {
        const { website, key } = await seeded();
        const before = await eventsOf(website.id);
        const rollupsBefore = await rollups(website.id);
        expectError(await del(GOALS, key, query), 400, pattern);
        expect(await eventsOf(website.id)).toEqual(before);
        expect(await rollups(website.id)).toEqual(rollupsBefore);
      });
    }

    it('answers 400 naming the website id when an account token leaves it out', async () => {
      const { owner, website } = await seeded();
      const before = await eventsOf(website.id);
      expectError(await del(GOALS, owner.token, { name: 'signup' }), 400, /query\.websiteId: is required/);
      expect(await eventsOf(website.id)).toEqual(before);
    });
  });

  describe('DELETE /api/v1/payments', () => {
    async function withPayments() {
      const context = await seeded();
      const { key, v1, v2 } = context;
      const payments = [
        { transaction_id: 'tx_a', amount: 10, currency: 'EUR', datafast_visitor_id: v1, timestamp: '2026-03-02T10:00:00Z' },
        { transaction_id: 'tx_b', amount: 20, currency: 'EUR', datafast_visitor_id: v1, timestamp: '2026-03-03T22:30:00Z' },
        { transaction_id: 'tx_c', amount: 30, currency: 'EUR', datafast_visitor_id: v2, timestamp: '2026-03-04T23:30:00Z' },
        { transaction_id: 'tx_d', amount: 0, currency: 'EUR', timestamp: '2026-03-04T12:00:00Z' },
      ];
      for (const body of payments) expect((await t.request('POST', PAYMENTS, { token: key, body })).status).toBe(200);
      // The breakdowns' revenue took them in (v1's and v2's keys).
      await expectRollupsConsistent(context.website.id);
      return context;
    }
    const transactions = async (websiteId: string) =>
      (await t.db.selectFrom('payments').select('transaction_id').where('website_id', '=', websiteId).execute()).map((r) => r.transaction_id).sort();

    it('deletes one payment by transaction_id with the df_ key, and the revenue follows', async () => {
      const { website, key } = await withPayments();
      await t.db.updateTable('websites').set({ currency: 'EUR' }).where('id', '=', website.id).execute();
      expect(await ok(PAYMENTS, key, { transaction_id: 'tx_b' })).toEqual({ message: 'Deleted 1 payment', deleted: 1, transaction_id: 'tx_b' });
      expect(await transactions(website.id)).toEqual(['tx_a', 'tx_c', 'tx_d']);
      const series = await t.request('GET', TIMESERIES, {
        token: key,
        query: { fields: 'revenue,payments', interval: 'day', startAt: '2026-03-01', endAt: '2026-03-06' },
      });
      expect(series.status, series.raw).toBe(200);
      expect(series.body.totals).toEqual({ revenue: 40, payments: 3, revenueBreakdown: { new: 40, renewal: 0, refund: 0 } });
    });

    it("deletes by visitor and by days in the website's time zone, with an account token", async () => {
      const { owner, website, v1 } = await withPayments();
      const token = await createToken(t, owner, ['payments:write'], [website.id]);
      // tx_c is 5 March in Paris (23:30 UTC on the 4th): 4 March holds tx_d only.
      expect((await ok(PAYMENTS, token, { websiteId: website.id, startAt: '2026-03-04', endAt: '2026-03-04' })).deleted).toBe(1);
      expect(await transactions(website.id)).toEqual(['tx_a', 'tx_b', 'tx_c']);
      expect(await ok(PAYMENTS, token, { websiteId: website.id, datafast_visitor_id: v1, start: '2026-03-03', end: '2026-03-03' })).toEqual({
        message: 'Deleted 1 payment',
        deleted: 1,
        datafast_visitor_id: v1,
        timeRange: { start: '2026-03-02T23:00:00.000Z', end: '2026-03-03T22:59:59.999Z' },
      });
      expect(await transactions(website.id)).toEqual(['tx_a', 'tx_c']);
      expect((await ok(PAYMENTS, token, { websiteId: website.id, datafast_visitor_id: v1 })).deleted).toBe(1);
      expect((await ok(PAYMENTS, token, { websiteId: website.id, transaction_id: 'tx_a' })).deleted).toBe(0);
      expect(await transactions(website.id)).toEqual(['tx_c']);
      await expectRollupsConsistent(website.id);
    });

    it('takes tx_id as another spelling of transaction_id, and answers the transaction it applied', async () => {
      const { website, key } = await withPayments();
      expect(await ok(PAYMENTS, key, { tx_id: 'tx_c' })).toEqual({ message: 'Deleted 1 payment', deleted: 1, transaction_id: 'tx_c' });
      expect(await transactions(website.id)).toEqual(['tx_a', 'tx_b', 'tx_d']);
      // Both spellings with the same value are one filter; with the other filters they combine.
      expect(await ok(PAYMENTS, key, { tx_id: 'tx_a', transaction_id: 'tx_a', startAt: '2026-03-03', endAt: '2026-03-03' })).toEqual({
        message: 'Deleted 0 payments',
        deleted: 0,
        transaction_id: 'tx_a',
        timeRange: { start: '2026-03-02T23:00:00.000Z', end: '2026-03-03T22:59:59.999Z' },
      });
      expect((await ok(PAYMENTS, key, { tx_id: 'tx_a', transaction_id: 'tx_a' })).deleted).toBe(1);
      expect(await transactions(website.id)).toEqual(['tx_b', 'tx_d']);
    });

    it('lets the same transaction_id be recorded again after its deletion', async () => {
      const { website, key } = await withPayments();
      await ok(PAYMENTS, key, { transaction_id: 'tx_a' });
      const again = await t.request('POST', PAYMENTS, { token: key, body: { transaction_id: 'tx_a', amount: 5, currency: 'EUR' } });
      expect(again.body.message).toBe('Payment recorded');
      expect(await transactions(website.id)).toEqual(['tx_a', 'tx_b', 'tx_c', 'tx_d']);
    });

    it('answers 401, 403 and 404 in the contract order, and deletes nothing', async () => {
      const { owner, website } = await withPayments();
      const query = { websiteId: website.id, transaction_id: 'tx_a' };
      expectError(await t.request('DELETE', PAYMENTS, { query }), 401);
      expectError(await del(PAYMENTS, await createToken(t, owner, allBut('payments:write')), query), 403, /payments:write/);
      const viewer = await createAccount(t);
      await addMember(t, website.id, viewer.id, 'viewer');
      expectError(await del(PAYMENTS, viewer.token, query), 403, /viewer/);
      const other = await createWebsite(t, owner.token);
      expectError(await del(PAYMENTS, await createToken(t, owner, ['payments:write'], [other.id]), query), 403, /not allowed/);
      expectError(await del(PAYMENTS, (await createApiKey(t, owner.token, other.id)).key, query), 403, /another website/);
      const stranger = await createAccount(t);
      expectError(await del(PAYMENTS, stranger.token, query), 404);
      expectError(await del(PAYMENTS, stranger.token, { websiteId: website.id }), 404);
      expect(await transactions(website.id)).toEqual(['tx_a', 'tx_b', 'tx_c', 'tx_d']);
    });

    const bad: [string, Record<string, string>, RegExp][] = [
      ['no filter at all', {}, /query: send at least one filter/],
      ['startAt without endAt', { startAt: '2026-03-02' }, /query\.endAt: is required/],
      ['a bound that is not a date', { start: 'monday', end: '2026-03-02' }, /query\.start: must be a YYYY-MM-DD day/],
      ['startAt and start that differ', { startAt: '2026-03-01', start: '2026-03-02', endAt: '2026-03-04' }, /query\.start: is another spelling/],
      ['an empty transaction_id', { transaction_id: '' }, /query\.transaction_id/],
      ['a transaction_id of 256 characters', { transaction_id: 't'.repeat(256) }, /query\.transaction_id/],
      ['an empty tx_id', { tx_id: '' }, /query\.tx_id/],
      ['tx_id and transaction_id that differ', { transaction_id: 'tx_a', tx_id: 'tx_b' }, /query\.tx_id: is another spelling of transaction_id/],
      ['a goal filter', { name: 'signup' }, /query\.name: is not an allowed field/],
    ];
    for (const [label, query, pattern] of bad) {
      it(`answers 400 for ${label}, naming the field, and deletes nothing`, async () => {
        const { website, key } = await withPayments();
        expectError(await del(PAYMENTS, key, query), 400, pattern);
        expect(await transactions(website.id)).toEqual(['tx_a', 'tx_b', 'tx_c', 'tx_d']);
      });
    }
  });
}, { withPostgres: true });
