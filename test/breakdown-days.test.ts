import type { Kysely } from 'kysely';
import { expect, it } from 'vitest';
import { DateTime } from 'luxon';
import { breakdownDays } from '../src/db/migrations/0019-breakdown-days.ts';
import { rebuildSessions } from '../src/modules/analytics/session-rebuild.ts';
import type { Database } from '../src/db/schema.ts';
import { rebuildBreakdownRollups } from '../src/modules/analytics/breakdown-rollups.ts';
import { offsetPeriods } from '../src/modules/analytics/local-day-sql.ts';
import { startOfLocalDay } from '../src/modules/analytics/zoned-time.ts';
import type { NewEvent } from '../src/modules/events/event.types.ts';
import { storePayment } from './helpers/payments.ts';
import type { RowsPage, BreakdownRow } from '../src/modules/stats/event-store.ts';
import { BREAKDOWNS, type Breakdown } from '../src/modules/analytics/breakdowns.ts';
import { sqlEventStore } from '../src/modules/stats/sql/sql-event-store.ts';
import type { StatsScope } from '../src/modules/stats/stats.params.ts';
import { wholeDaysOf } from '../src/modules/stats/whole-days.ts';
import { newId } from '../src/lib/ids.ts';
import { analyticsFixture } from './helpers/analytics-fixture.ts';
import { settleRollups, useTestApp, writeAndDerive } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { newEvent } from './helpers/factories.ts';
import { migrateAndBuild } from './helpers/derived-data-worker.ts';

// A breakdown without filters over whole local days of the website, up to its last day with
// data, reads breakdown_days (pageviews and events or sessions per key and day) and
// breakdown_last_days (visitors per key by their last day under it) instead of the raw events or
// sessions. It must say exactly what the raw read says, revenue and paging included, across
// midnights and a daylight-saving change of the website's zone, events that arrive out of order
// (a session that starts a day earlier, or whose entry or exit page moves), a server-goal delete
// and a change of zone; a range that ends before the data does is read raw. Both tables must equal a
// rebuild and migration 0019's fill.

const MONEY = { currency: 'USD', includeRenewals: true };
const PAGES = [
  { limit: 100, offset: 0 },
  { limit: 2, offset: 1 },
  { limit: 5, offset: 50 },
];

const utc = (day: string, zone: string) => new Date(startOfLocalDay(day, zone)!.toMillis()).toISOString();

/** The scope of local days first..last of `zone` (both included), as the route would parse it. */
function daysScope(websiteId: string, zone: string, first: string, last: string): StatsScope {
  const next = startOfLocalDay(last, zone)!.plus({ days: 1 }).toISODate()!;
  const range = { from: utc(first, zone), to: utc(next, zone) };
  const wholeDays = wholeDaysOf(range, zone);
  expect(wholeDays).toEqual({ first, last });
  return { websiteId, range, timezone: zone, filters: [], wholeDays };
}

async function dayRows(db: Kysely<Database>, websiteId: string) {
  const sorted = (rows: object[]) => rows.map((row) => JSON.stringify(Object.entries(row).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v]))).sort();
  return {
    visitors: sorted(await db.selectFrom('breakdown_visitors').selectAll().where('website_id', '=', websiteId).execute()),
    days: sorted(await db.selectFrom('breakdown_days').selectAll().where('website_id', '=', websiteId).execute()),
    // A day whose visitors all came back later keeps a row of 0, which a rebuild has no row for.
    lastDays: sorted(await db.selectFrom('breakdown_last_days').selectAll().where('website_id', '=', websiteId).where('visitors', '<>', 0).execute()),
  };
}

describeEachEngine('event breakdowns over whole days, from the day rollups', (engine) => {
  const t = useTestApp(engine);
  const store = () => sqlEventStore(t.db, settleRollups(t));

  /** The fixture (early March, Paris) and traffic around the night of 2026-03-29, when Paris moves to UTC+2. */
  async function website() {
    const f = await analyticsFixture(t);
    const at = (visitorId: string, occurredAt: string, extra: Partial<NewEvent> = {}) =>
      newEvent(f.website.id, visitorId, { sessionId: `s-${visitorId}-${occurredAt.slice(0, 10)}`, hostname: f.website.domain, path: '/docs', country: 'US', device: 'desktop', browser: 'Chrome', os: 'Windows', occurredAt, ...extra });
    await writeAndDerive(t, [
      // 23:30 UTC on the 27th is the 28th in Paris (UTC+1).
      at('v20', '2026-03-27T23:30:00.000Z'),
      at('v20', '2026-03-28T22:59:00.000Z', { path: '/pricing' }),
      // 23:30 UTC on the 28th is still the 29th's 00:30 in Paris; 22:30 UTC on the 29th is 00:30 on the 30th (UTC+2).
      at('v21', '2026-03-28T23:30:00.000Z', { country: 'FR' }),
      at('v21', '2026-03-29T22:30:00.000Z', { country: 'FR', path: '/pricing' }),
      at('v22', '2026-03-29T21:59:00.000Z', { type: 'custom', name: 'signup', path: '/pricing' }),
      at('v22', '2026-03-29T22:00:00.000Z', { type: 'external_link', details: { linkUrl: 'https://example.org/' } }),
    ]);
    // Out of order: v20 comes back on an earlier day, v21 on a later one; v20's first session
    // gains an earlier start, on the 27th in Paris, and another entry page, and v21's first
    // session grows (its exit page moves).
    await writeAndDerive(t, [
      at('v20', '2026-03-27T22:30:00.000Z', { sessionId: 's-v20-2026-03-27', path: '/early' }),
      at('v21', '2026-03-28T23:40:00.000Z', { sessionId: 's-v21-2026-03-28', country: 'FR', path: '/later' }),
      at('v20', '2026-03-26T10:00:00.000Z', { path: '/pricing', browser: 'Firefox' }),
      at('v21', '2026-03-31T10:00:00.000Z', { country: 'FR', path: '/' }),
      at('v1', '2026-03-30T08:00:00.000Z', { path: '/' }),
      newEvent(f.website.id, 'v22', { type: 'custom', name: 'upgrade', source: 'api', sessionId: null, hostname: null, path: null, country: 'US', occurredAt: '2026-03-31T09:00:00.000Z' }),
    ]);
    const payment = (visitorId: string, occurredAt: string, amountMinor: number) => ({
      id: newId(), website_id: f.website.id, transaction_id: `tx-${newId()}`, amount_minor: amountMinor, currency: 'USD', visitor_id: visitorId,
      email: null, renewal: false, refunded: false, occurred_at: occurredAt, created_at: occurredAt,
    });
    for (const row of [payment('v21', '2026-03-29T23:00:00.000Z', 1500), payment('v20', '2026-03-26T11:00:00.000Z', 700)]) {
      await storePayment(t.db, row);
    }
    return f;
  }

  /** Every breakdown over these local days and pages equals the raw read of the same range. */
  async function expectDaysEqualRaw(websiteId: string, zone: string, ranges: [string, string][]) {
    for (const [first, last] of ranges) {
      const scope = daysScope(websiteId, zone, first, last);
      for (const kind of BREAKDOWNS) {
        for (const page of PAGES) {
          const raw = await store().breakdown(kind, { ...scope, wholeDays: null }, page, MONEY);
          const days = await store().breakdown(kind, scope, page, MONEY);
          expect(days, `${kind} ${first}..${last} ${JSON.stringify(page)}`).toEqual(raw);
        }
      }
    }
  }

  const LAST_DAY = '2026-03-31';
  const RANGES: [string, string][] = [
    ['2026-03-01', LAST_DAY],
    ['2026-03-28', LAST_DAY],
    ['2026-03-29', '2026-04-02'],
    ['2026-03-30', LAST_DAY],
    [LAST_DAY, LAST_DAY],
    ['2026-04-01', '2026-04-30'],
  ];

  it('answers every breakdown over days reaching the last one exactly as the raw events and sessions do', async () => {
    const f = await website();
    await expectDaysEqualRaw(f.website.id, 'Europe/Paris', RANGES);
    const pages = await store().breakdown('pages', daysScope(f.website.id, 'Europe/Paris', '2026-03-28', LAST_DAY), PAGES[0]!, MONEY);
    // v20 (28th), v21 (30th, in Paris) and v20's earlier visit on the 26th, outside the range.
    expect(pages.rows.find((row) => row.keys.path === '/pricing')).toMatchObject({ visitors: 2, pageviews: 2, revenueMinor: 1500 });
  });

  it('reads the day rollups when the range reaches the last day, and the raw events when it ends before', async () => {
    const f = await website();
    const id = f.website.id;
    const reaching = daysScope(id, 'Europe/Paris', '2026-03-28', LAST_DAY);
    const before = daysScope(id, 'Europe/Paris', '2026-03-01', '2026-03-30');
    for (const kind of ['countries', 'referrers'] as Breakdown[]) {
      const read = (scope: StatsScope): Promise<RowsPage<BreakdownRow>> => store().breakdown(kind, scope, PAGES[0]!, MONEY);
      const [reachingBefore, beforeBefore] = [await read(reaching), await read(before)];
      // Skew the rollups: a read that uses them changes, the raw one does not.
      await t.db.updateTable('breakdown_days').set({ events: 1000 }).where('website_id', '=', id).where('breakdown', '=', kind).where('day', '=', LAST_DAY).execute();
      await t.db.updateTable('breakdown_last_days').set({ visitors: 1000 }).where('website_id', '=', id).where('breakdown', '=', kind).where('day', '=', LAST_DAY).execute();
      const skewed = await read(reaching);
      expect(skewed, kind).not.toEqual(reachingBefore);
      expect(skewed.rows[0]!.visitors, kind).toBeGreaterThan(1000);
      expect(await read(before), kind).toEqual(beforeBefore);
    }
  });

  it('keeps the day rollups equal to a rebuild across ingestion, a goal delete, a change of zone and the build the migration marks', async () => {
    const f = await website();
    const id = f.website.id;
    const ingested = await dayRows(t.db, id);
    expect(ingested.days.length).toBeGreaterThan(0);
    expect(ingested.visitors.every((row) => row.includes('"last_day"'))).toBe(true);
    await t.db.transaction().execute((trx) => rebuildBreakdownRollups(trx, id));
    expect(await dayRows(t.db, id)).toEqual(ingested);

    // v22's upgrade was its only event on the 31st: its last day under US goes back to the 30th (Paris).
    const deleted = await t.request('DELETE', '/api/v1/goals', { token: f.owner.token, query: { websiteId: id, name: 'upgrade' } });
    expect(deleted.status).toBe(200);
    const repaired = await dayRows(t.db, id);
    expect(repaired).not.toEqual(ingested);
    await t.db.transaction().execute((trx) => rebuildBreakdownRollups(trx, id));
    expect(await dayRows(t.db, id)).toEqual(repaired);
    await expectDaysEqualRaw(id, 'Europe/Paris', RANGES);

    // In Los Angeles, 23:30 UTC on the 27th is still the 27th.
    const moved = await t.request('PUT', `/api/v1/admin/websites/${id}`, { token: f.owner.token, body: { timezone: 'America/Los_Angeles' } });
    expect(moved.status, moved.raw).toBe(200);
    // The days move in the background (day-relocation.ts): wait for the move to end.
    await t.app.derivedDataWorker.settle();
    const zoned = await dayRows(t.db, id);
    expect(zoned.days.some((row) => row.includes('"2026-03-27"'))).toBe(true);
    await t.db.transaction().execute((trx) => rebuildBreakdownRollups(trx, id));
    expect(await dayRows(t.db, id)).toEqual(zoned);
    await expectDaysEqualRaw(id, 'America/Los_Angeles', [['2026-03-27', LAST_DAY], ['2026-03-02', LAST_DAY]]);

    const migration = breakdownDays(engine);
    const untyped = t.db as unknown as Kysely<unknown>;
    // The migration only marks the build (src/db/migrations/derived-builds.ts); the server runs it.
    await migrateAndBuild(t, id, 'migration 0019: breakdown_days, breakdown_last_days', async () => {
      await migration.down(untyped);
      await migration.up(untyped);
    });
    // The build replays the events in time order, so v20's session of the 27th enters at /early,
    // the earlier pageview that arrived late (ingestion kept the entry page that arrived first):
    // the rows equal a rebuild of the sessions and breakdowns from the raw events.
    const built = await dayRows(t.db, id);
    expect(built).not.toEqual(zoned);
    expect(built.visitors.some((row) => row.includes('entry-pages') && row.includes('/early'))).toBe(true);
    await t.db.transaction().execute(async (trx) => {
      await rebuildSessions(trx, id);
      await rebuildBreakdownRollups(trx, id);
    });
    expect(await dayRows(t.db, id)).toEqual(built);
  });

  it('serves the route over whole days as over the same range read raw', async () => {
    const f = await website();
    const query = { websiteId: f.website.id, startAt: '2026-03-28', endAt: LAST_DAY };
    const days = await t.request('GET', '/api/v1/analytics/pages', { token: f.owner.token, query });
    expect(days.status, days.raw).toBe(200);
    // The same range a millisecond short of the last midnight (endAt is included) is not whole days: read raw.
    const end = new Date(Date.parse(utc('2026-04-01', 'Europe/Paris')) - 2).toISOString();
    const raw = await t.request('GET', '/api/v1/analytics/pages', { token: f.owner.token, query: { ...query, startAt: utc('2026-03-28', 'Europe/Paris'), endAt: end } });
    expect(raw.status, raw.raw).toBe(200);
    expect(days.body.data).toEqual(raw.body.data);
    expect(days.body.data.length).toBeGreaterThan(1);
  });
});

it('finds each offset change of a zone to the millisecond', () => {
  const march = Date.parse('2026-03-01T00:00:00.000Z');
  const november = Date.parse('2026-11-30T00:00:00.000Z');
  expect(offsetPeriods('Europe/Paris', march, november)).toEqual([
    { from: null, seconds: 3600 },
    { from: Date.parse('2026-03-29T01:00:00.000Z'), seconds: 7200 },
    { from: Date.parse('2026-10-25T01:00:00.000Z'), seconds: 3600 },
  ]);
  expect(offsetPeriods('Asia/Kolkata', march, november)).toEqual([{ from: null, seconds: 19800 }]);
});

it('cuts any span out of the cached blocks of offsets exactly as worked out for it alone', () => {
  let state = 12345;
  const next = () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
  const base = Date.parse('2024-01-01T00:00:00.000Z');
  for (const zone of ['Europe/Paris', 'America/Los_Angeles', 'Australia/Lord_Howe', 'Asia/Kolkata', 'Pacific/Chatham']) {
    for (let n = 0; n < 40; n++) {
      const first = base + Math.floor(next() * 3 * 365 * 86_400_000);
      const last = first + Math.floor(next() * 400 * 86_400_000);
      const periods = offsetPeriods(zone, first, last);
      expect(periods[0]!.from).toBeNull();
      for (let i = 1; i < periods.length; i++) {
        expect(periods[i]!.from!).toBeGreaterThan(first);
        expect(periods[i]!.from!).toBeLessThanOrEqual(last);
        expect(periods[i]!.seconds).not.toBe(periods[i - 1]!.seconds);
      }
      for (let k = 0; k < 25; k++) {
        const at = first + Math.floor(next() * (last - first + 1));
        const inForce = periods.filter((period) => period.from === null || period.from <= at).at(-1)!;
        expect(inForce.seconds, `${zone} at ${new Date(at).toISOString()}`).toBe(Math.round(DateTime.fromMillis(at, { zone }).offset * 60));
      }
    }
  }
});
