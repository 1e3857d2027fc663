import type { Kysely } from 'kysely';
import { expect, it } from 'vitest';
import { breakdownProfileDays } from '../src/db/migrations/0033-breakdown-profile-days.ts';
import type { Database } from '../src/db/schema.ts';
import { BREAKDOWNS } from '../src/modules/analytics/breakdowns.ts';
import { rebuildBreakdownRollups } from '../src/modules/analytics/breakdown-rollups.ts';
import { startOfLocalDay } from '../src/modules/analytics/zoned-time.ts';
import type { NewEvent } from '../src/modules/events/event.types.ts';
import { storePayment } from './helpers/payments.ts';
import type { Filter } from '../src/modules/stats/stats.filters.ts';
import { sqlEventStore } from '../src/modules/stats/sql/sql-event-store.ts';
import type { StatsScope } from '../src/modules/stats/stats.params.ts';
import { wholeDaysOf } from '../src/modules/stats/whole-days.ts';
import { newId } from '../src/lib/ids.ts';
import { analyticsFixture } from './helpers/analytics-fixture.ts';
import { ATTRIBUTE_FILTER_SETS } from './helpers/attribute-filters.ts';
import { settleRollups, useTestApp, writeAndDerive } from './helpers/app.ts';
import { rebuilt, rowsOf } from './helpers/derived-tables.ts';
import { migrateAndBuild } from './helpers/derived-data-worker.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { newEvent } from './helpers/factories.ts';

// The overview and every event breakdown filtered on visitor attributes alone, over whole local
// days of the website up to its latest data, read the day rollups by profile
// (breakdown_profile_days, breakdown_profile_last_days) and the varied visitors' raw events (issue
// 39 item 2). Each must say exactly what the raw read of the same range says: one and two filters
// on every visitor attribute with every operator, ranges of 7 and 30 days ending on the last day
// with data, one day, a range past it and one that ends before it (read raw), revenue and paging
// included, with visitors who vary within a batch, start to vary in a later one, and are made
// steady again by a goal delete; across a change of the zone. Both tables must equal a rebuild
// after each, and after the build migration 0033 marks.

const MONEY = { currency: 'USD', includeRenewals: true };
const PAGES = [
  { limit: 100, offset: 0 },
  { limit: 2, offset: 1 },
  { limit: 5, offset: 50 },
];
const LAST_DAY = '2026-03-31';
const RANGES: [string, string][] = [
  ['2026-03-25', LAST_DAY], // the last 7 days
  ['2026-03-02', LAST_DAY], // the last 30 days
  [LAST_DAY, LAST_DAY],
  ['2026-03-29', '2026-04-04'], // past the latest data
  ['2026-03-01', '2026-03-30'], // a past month: ends before the data, read raw
];
const ONE_EACH: Filter[][] = [
  [{ dimension: 'device', operator: 'is', values: ['mobile'] }],
  [{ dimension: 'browser', operator: 'is', values: ['Chrome'] }],
  [{ dimension: 'os', operator: 'is', values: ['Windows'] }],
  [{ dimension: 'region', operator: 'is', values: ['Texas'] }],
  [{ dimension: 'city', operator: 'is', values: ['Austin'] }],
  [{ dimension: 'country', operator: 'is', values: ['FR'] }, { dimension: 'os', operator: 'is', values: ['macOS'] }],
];
const FILTER_SETS = [...ATTRIBUTE_FILTER_SETS, ...ONE_EACH];

const utc = (day: string, zone: string) => new Date(startOfLocalDay(day, zone)!.toMillis()).toISOString();

/** The scope of local days first..last of `zone` (both included), as the route would parse it. */
function daysScope(websiteId: string, zone: string, first: string, last: string, filters: Filter[]): StatsScope {
  const next = startOfLocalDay(last, zone)!.plus({ days: 1 }).toISODate()!;
  const range = { from: utc(first, zone), to: utc(next, zone) };
  const wholeDays = wholeDaysOf(range, zone);
  expect(wholeDays).toEqual({ first, last });
  return { websiteId, range, timezone: zone, filters, wholeDays };
}

const TABLES = ['breakdown_profile_days', 'breakdown_profile_last_days'] as const;

async function profileDayTables(db: Kysely<Database>, websiteId: string) {
  return { days: await rowsOf(db, TABLES[0], websiteId), lastDays: await rowsOf(db, TABLES[1], websiteId) };
}

describeEachEngine('filtered reads over whole days, from the day rollups by profile', (engine) => {
  const t = useTestApp(engine);
  const store = () => sqlEventStore(t.db, settleRollups(t));

  /** The fixture (Paris; v1 varies on region and city) and traffic over the last days of March, across the change to summer time. */
  async function website() {
    const f = await analyticsFixture(t);
    const at = (visitorId: string, occurredAt: string, extra: Partial<NewEvent> = {}) =>
      newEvent(f.website.id, visitorId, { sessionId: `s-${visitorId}-${occurredAt.slice(0, 10)}`, hostname: f.website.domain, path: '/docs', country: 'US', device: 'desktop', browser: 'Chrome', os: 'Windows', occurredAt, ...extra });
    const texas = (city: string) => ({ details: { region: 'Texas', city } });
    const mobile = { country: 'FR', device: 'mobile', browser: 'Safari', os: 'iOS' };
    await writeAndDerive(t, [
      // 23:30 UTC on the 27th is the 28th in Paris.
      at('v20', '2026-03-27T23:30:00.000Z', texas('Austin')),
      at('v20', '2026-03-28T22:59:00.000Z', { path: '/pricing', ...texas('Austin') }),
      at('v21', '2026-03-28T23:30:00.000Z', mobile),
      at('v21', '2026-03-29T22:30:00.000Z', { ...mobile, path: '/pricing' }),
      at('v22', '2026-03-29T21:59:00.000Z', { type: 'custom', name: 'signup', path: '/pricing' }),
      at('v22', '2026-03-29T22:00:00.000Z', { type: 'external_link', details: { linkUrl: 'https://example.org/' } }),
      // v23 travels within one batch; v24 is steady here and changes city in the next one.
      at('v23', '2026-03-26T08:00:00.000Z'),
      at('v23', '2026-03-26T09:00:00.000Z', { ...mobile, path: '/fr' }),
      at('v24', '2026-03-25T10:00:00.000Z', texas('Austin')),
      at('v24', '2026-03-30T10:01:00.000Z', { path: '/pricing', ...texas('Austin') }),
      at('v25', '2026-03-25T11:00:00.000Z', { country: 'FR', os: 'macOS', browser: 'Firefox' }),
    ]);
    await writeAndDerive(t, [
      at('v24', '2026-03-31T12:00:00.000Z', texas('Dallas')),
      // Out of order: v20 comes back on an earlier day, v21 on a later one.
      at('v20', '2026-03-26T10:00:00.000Z', { path: '/pricing', ...texas('Austin') }),
      at('v21', '2026-03-31T10:00:00.000Z', { ...mobile, path: '/' }),
      at('v25', '2026-03-31T11:10:00.000Z', { path: '/pricing', country: 'FR', os: 'macOS', browser: 'Firefox' }),
      at('v25', '2026-03-31T11:11:00.000Z', { type: 'custom', name: 'signup', path: '/pricing', country: 'FR', os: 'macOS', browser: 'Firefox' }),
      // Sessions that grow: v25's bounce of the 25th gets a second page; v21's session of the 29th
      // (Paris) gains an earlier pageview at 23:50 on the 28th (Paris), so it starts a day earlier
      // with another entry page; v22's gains one earlier the same day.
      at('v25', '2026-03-25T11:05:00.000Z', { sessionId: 's-v25-2026-03-25', path: '/blog', country: 'FR', os: 'macOS', browser: 'Firefox' }),
      at('v21', '2026-03-28T22:50:00.000Z', { ...mobile, sessionId: 's-v21-2026-03-28', path: '/early' }),
      at('v22', '2026-03-29T21:00:00.000Z', { sessionId: 's-v22-2026-03-29', path: '/start' }),
      // A server goal that knows no region or city: v20 varies until it is deleted.
      newEvent(f.website.id, 'v20', { type: 'custom', name: 'upgrade', source: 'api', sessionId: null, hostname: null, path: null, country: 'US', device: 'desktop', browser: 'Chrome', os: 'Windows', occurredAt: '2026-03-30T09:00:00.000Z' }),
    ]);
    const payment = (visitorId: string, occurredAt: string, amountMinor: number) => ({
      id: newId(), website_id: f.website.id, transaction_id: `tx-${newId()}`, amount_minor: amountMinor, currency: 'USD', visitor_id: visitorId,
      email: null, renewal: false, refunded: false, occurred_at: occurredAt, created_at: occurredAt,
    });
    for (const row of [payment('v21', '2026-03-29T23:00:00.000Z', 1500), payment('v25', '2026-03-31T11:12:00.000Z', 700), payment('v24', '2026-03-26T11:00:00.000Z', 300)]) {
      await storePayment(t.db, row);
    }
    return f;
  }

  /** The overview and every breakdown over these ranges, for every filter set, equal the raw read. */
  async function expectEqualRaw(websiteId: string, zone: string, ranges: [string, string][], filterSets: Filter[][] = FILTER_SETS) {
    let nonEmpty = 0;
    for (const [first, last] of ranges) {
      for (const filters of filterSets) {
        const scope = daysScope(websiteId, zone, first, last, filters);
        const label = `${first}..${last} ${JSON.stringify(filters)}`;
        expect(await store().overview(scope, MONEY), `overview ${label}`).toEqual(await store().overview({ ...scope, wholeDays: null }, MONEY));
        for (const kind of BREAKDOWNS) {
          for (const page of filters === filterSets[0] ? PAGES : PAGES.slice(0, 1)) {
            const days = await store().breakdown(kind, scope, page, MONEY);
            expect(days, `${kind} ${label} ${JSON.stringify(page)}`).toEqual(await store().breakdown(kind, { ...scope, wholeDays: null }, page, MONEY));
            if (days.rows.length > 0) nonEmpty += 1;
          }
        }
      }
    }
    return nonEmpty;
  }

  it('answers the overview and every breakdown, every filter and range, exactly as the raw events do', async () => {
    const f = await website();
    expect(await expectEqualRaw(f.website.id, 'Europe/Paris', RANGES)).toBeGreaterThan(FILTER_SETS.length * BREAKDOWNS.length);
    // Over the last 7 days, US: v20 (varied), v22, v24 (varied) and the fixture's none; v22's signup converts.
    const us = daysScope(f.website.id, 'Europe/Paris', '2026-03-25', LAST_DAY, ATTRIBUTE_FILTER_SETS[0]!);
    expect(await store().overview(us, MONEY)).toMatchObject({ visitors: 4, convertedVisitors: 2 });
    const pages = await store().breakdown('pages', us, PAGES[0]!, MONEY);
    // v20 (on the 26th and the 28th) and v24, who paid 3.00 on the 26th.
    expect(pages.rows.find((row) => row.keys.path === '/pricing')).toMatchObject({ visitors: 2, revenueMinor: 300 });
  });

  it('reads the profile rows for steady visitors when the range reaches the last day, and the raw events when it ends before', async () => {
    const f = await website();
    const id = f.website.id;
    const filters: Filter[] = [{ dimension: 'country', operator: 'is', values: ['FR'] }];
    const reaching = daysScope(id, 'Europe/Paris', '2026-03-25', LAST_DAY, filters);
    const before = daysScope(id, 'Europe/Paris', '2026-03-01', '2026-03-30', filters);
    const read = async (scope: StatsScope) => ({
      pages: await store().breakdown('pages', scope, PAGES[0]!, MONEY),
      entries: await store().breakdown('entry-pages', scope, PAGES[0]!, MONEY),
      overview: await store().overview(scope, MONEY),
    });
    const [reachingBefore, beforeBefore] = [await read(reaching), await read(before)];
    // Skew the rollups: a read that uses them changes, the raw one does not.
    await t.db.updateTable('breakdown_profile_last_days').set({ visitors: 1000 }).where('website_id', '=', id).where('day', '=', LAST_DAY).execute();
    await t.db.updateTable('breakdown_profile_days').set({ pageviews: 1000, events: 1000 }).where('website_id', '=', id).where('day', '=', LAST_DAY).execute();
    const skewed = await read(reaching);
    expect(skewed.pages.rows[0]!.visitors).toBeGreaterThan(1000);
    expect(skewed.entries.rows[0]!.visitors).toBeGreaterThan(1000);
    expect(skewed.entries.rows[0]!.pageviews).toBeGreaterThan(1000);
    expect(skewed.overview.visitors).toBeGreaterThan(1000);
    expect(skewed.overview.pageviews).toBeGreaterThan(1000);
    expect(skewed.overview.sessions).toBeGreaterThan(1000);
    expect(skewed).not.toEqual(reachingBefore);
    expect(await read(before)).toEqual(beforeBefore);
  });

  it('keeps both tables equal to a rebuild across ingestion, a goal delete, a change of zone and the build the migration marks', async () => {
    const f = await website();
    const id = f.website.id;
    // Against the breakdowns rebuilt from the stored sessions: ingestion keeps the entry page of
    // a session that arrived first (v21's /docs), which a rebuild of the sessions, replaying in
    // time order, would change (docs/decisions.md, "Left alone"); the build below does.
    const expectRebuilt = async () => {
      const kept = await profileDayTables(t.db, id);
      const rolledBack = new Error('rolled back on purpose');
      await t.db
        .transaction()
        .execute(async (trx) => {
          await rebuildBreakdownRollups(trx, id);
          expect(await profileDayTables(trx, id)).toEqual(kept);
          throw rolledBack;
        })
        .catch((error) => {
          if (error !== rolledBack) throw error;
        });
      return kept;
    };
    const ingested = await expectRebuilt();
    expect(ingested.days.length).toBeGreaterThan(20);
    // v21 is steady (FR, mobile, iOS); v20 and v24, who varied, have none.
    expect(ingested.lastDays.some((row) => row.includes('iOS'))).toBe(true);
    expect(ingested.lastDays.some((row) => row.includes('Austin'))).toBe(false);

    // Deleting v20's server goal makes it steady again: it joins its profile with every row.
    const deleted = await t.request('DELETE', '/api/v1/goals', { token: f.owner.token, query: { websiteId: id, name: 'upgrade' } });
    expect(deleted.status).toBe(200);
    const repaired = await expectRebuilt();
    expect(repaired).not.toEqual(ingested);
    await expectEqualRaw(id, 'Europe/Paris', RANGES.slice(0, 2), ATTRIBUTE_FILTER_SETS.slice(0, 4));

    // In Los Angeles, 23:30 UTC on the 27th is still the 27th.
    const moved = await t.request('PUT', `/api/v1/admin/websites/${id}`, { token: f.owner.token, body: { timezone: 'America/Los_Angeles' } });
    expect(moved.status, moved.raw).toBe(200);
    await t.app.derivedDataWorker.settle();
    const zoned = await expectRebuilt();
    expect(zoned.days.some((row) => row.includes('"2026-03-27"'))).toBe(true);
    await expectEqualRaw(id, 'America/Los_Angeles', [['2026-03-25', LAST_DAY], ['2026-03-02', LAST_DAY]], ATTRIBUTE_FILTER_SETS.slice(0, 4));

    const migration = breakdownProfileDays(engine);
    const untyped = t.db as unknown as Kysely<unknown>;
    await migrateAndBuild(t, id, 'migration 0033: breakdown_profile_days, breakdown_profile_last_days', async () => {
      await migration.down(untyped);
      await migration.up(untyped);
    });
    // The build replays the events in time order: v21's session enters at /early, as a rebuild of
    // every derived table from the raw events (the sessions included) gives it.
    const built = await profileDayTables(t.db, id);
    expect(built).not.toEqual(zoned);
    expect(built.days.some((row) => row.includes('entry-pages') && row.includes('/early'))).toBe(true);
    const again = await rebuilt(t.db, id, 'America/Los_Angeles');
    expect(built).toEqual({ days: again[TABLES[0]], lastDays: again[TABLES[1]] });
  });

  it('serves the filtered route over whole days as over the same range read raw', async () => {
    const f = await website();
    const query = { websiteId: f.website.id, startAt: '2026-03-25', endAt: LAST_DAY, filter_country: 'US' };
    for (const path of ['/api/v1/analytics/pages', '/api/v1/analytics/overview']) {
      const days = await t.request('GET', path, { token: f.owner.token, query });
      expect(days.status, days.raw).toBe(200);
      // The same range a millisecond short of the last midnight is not whole days: read raw.
      const end = new Date(Date.parse(utc('2026-04-01', 'Europe/Paris')) - 2).toISOString();
      const raw = await t.request('GET', path, { token: f.owner.token, query: { ...query, startAt: utc('2026-03-25', 'Europe/Paris'), endAt: end } });
      expect(raw.status, raw.raw).toBe(200);
      expect(days.body.data).toEqual(raw.body.data);
    }
  });
});
