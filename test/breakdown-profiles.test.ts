import type { Kysely } from 'kysely';
import { expect, it } from 'vitest';
import { breakdownProfiles } from '../src/db/migrations/0017-breakdown-profiles.ts';
import type { Database } from '../src/db/schema.ts';
import { rebuildBreakdownRollups } from '../src/modules/analytics/breakdown-rollups.ts';
import { rebuildSessions } from '../src/modules/analytics/session-rebuild.ts';
import { rebuildVisitorTotals } from '../src/modules/analytics/visitor-totals.ts';
import type { NewEvent } from '../src/modules/events/event.types.ts';
import type { FunnelStepSpec } from '../src/modules/stats/event-store.ts';
import { BREAKDOWNS } from '../src/modules/analytics/breakdowns.ts';
import { rawFunnel } from '../src/modules/stats/sql/funnel-sql.ts';
import { sqlEventStore } from '../src/modules/stats/sql/sql-event-store.ts';
import type { StatsScope } from '../src/modules/stats/stats.params.ts';
import { analyticsFixture } from './helpers/analytics-fixture.ts';
import { ATTRIBUTE_FILTER_SETS, EVERYTHING } from './helpers/attribute-filters.ts';
import { settleRollups, useTestApp, writeAndDerive } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { newEvent } from './helpers/factories.ts';
import { migrateAndBuild } from './helpers/derived-data-worker.ts';

// An all-time breakdown filtered on visitor attributes alone sums breakdown_profiles (the rows of
// the visitors whose attributes never varied, per key and profile) and reads the raw events or
// sessions of the varied visitors only; the overview does the same with profile_totals, and the
// funnel counts the passing steady visitors with all their events. Each must say exactly what the
// raw read says, for every breakdown, filter and page, revenue and sessions included; and the
// profiles must equal a rebuild after ingestion (visitors who start to vary within a batch or in a
// later one, sessions that grow), a server-goal delete that makes a visitor steady again, a session
// rebuild and the migration.

const MONEY = { currency: 'USD', includeRenewals: true };

const PAGES = [
  { limit: 100, offset: 0 },
  { limit: 1, offset: 1 },
  { limit: 5, offset: 50 },
];

/** The rows of breakdown_profiles and profile_totals of a website, in a stable order. */
async function profileRows(db: Kysely<Database>, websiteId: string): Promise<string[]> {
  const rows = [
    ...(await db.selectFrom('breakdown_profiles').selectAll().where('website_id', '=', websiteId).execute()),
    ...(await db.selectFrom('profile_totals').selectAll().where('website_id', '=', websiteId).execute()),
  ];
  return rows.map((row) => JSON.stringify(Object.entries(row).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v]))).sort();
}

describeEachEngine('breakdowns and the overview filtered on visitor attributes, from profiles', (engine) => {
  const t = useTestApp(engine);

  /** The fixture (v1 varies on region and city), and visitors who vary, start to vary, or stay steady across batches. */
  async function website() {
    const f = await analyticsFixture(t);
    const at = (visitorId: string, occurredAt: string, extra: Partial<NewEvent> = {}) =>
      newEvent(f.website.id, visitorId, { sessionId: `s-${visitorId}`, hostname: f.website.domain, path: '/docs', country: 'US', device: 'desktop', browser: 'Chrome', os: 'Windows', occurredAt, ...extra });
    const texas = (city: string) => ({ details: { region: 'Texas', city } });
    await writeAndDerive(t, [
      // v8 travels within one batch.
      at('v8', '2026-03-04T08:00:00.000Z'),
      at('v8', '2026-03-04T09:00:00.000Z', { country: 'FR', path: '/fr' }),
      // v9 is steady in this batch and changes city in the next one.
      at('v9', '2026-03-04T10:00:00.000Z', texas('Austin')),
      at('v9', '2026-03-04T10:01:00.000Z', { path: '/pricing', ...texas('Austin') }),
      at('v10', '2026-03-04T11:00:00.000Z', { country: 'FR', os: 'macOS', browser: 'Firefox' }),
      at('v11', '2026-03-04T11:30:00.000Z', texas('Dallas')),
    ]);
    await writeAndDerive(t, [
      at('v9', '2026-03-04T12:00:00.000Z', texas('Dallas')),
      // v10's session grows: its exit page moves, and it completes a goal.
      at('v10', '2026-03-04T11:10:00.000Z', { path: '/pricing', country: 'FR', os: 'macOS', browser: 'Firefox' }),
      at('v10', '2026-03-04T11:11:00.000Z', { type: 'custom', name: 'signup', path: '/pricing', country: 'FR', os: 'macOS', browser: 'Firefox' }),
      // A server goal that knows no region or city: v11 varies until it is deleted.
      newEvent(f.website.id, 'v11', { type: 'custom', name: 'upgrade', source: 'api', sessionId: null, hostname: null, path: null, country: 'US', device: 'desktop', browser: 'Chrome', os: 'Windows', occurredAt: '2026-03-08T10:00:00.000Z' }),
    ]);
    return f;
  }

  async function rebuild(websiteId: string) {
    await t.db.transaction().execute(async (trx) => {
      await rebuildVisitorTotals(trx, websiteId);
      await rebuildBreakdownRollups(trx, websiteId);
    });
  }

  const variedOf = async (websiteId: string, visitorId: string) =>
    Number((await t.db.selectFrom('visitor_totals').select('varied').where('website_id', '=', websiteId).where('visitor_id', '=', visitorId).executeTakeFirstOrThrow()).varied);

  it('say what the raw events and sessions say, for every breakdown, filter and page', async () => {
    const f = await website();
    const store = sqlEventStore(t.db, settleRollups(t));
    let nonEmpty = 0;
    for (const filters of ATTRIBUTE_FILTER_SETS) {
      const scope: StatsScope = { websiteId: f.website.id, range: null, timezone: 'UTC', filters };
      for (const kind of BREAKDOWNS) {
        for (const page of PAGES) {
          const fromProfiles = await store.breakdown(kind, scope, page, MONEY);
          const fromEvents = await store.breakdown(kind, { ...scope, range: EVERYTHING }, page, MONEY);
          expect(fromProfiles, `${kind} ${JSON.stringify({ filters, page })}`).toEqual(fromEvents);
          if (fromProfiles.rows.length > 0) nonEmpty += 1;
        }
      }
    }
    expect(nonEmpty).toBeGreaterThan(ATTRIBUTE_FILTER_SETS.length * BREAKDOWNS.length);
    // v1 (varied on region and city, not on country) paid 49.00: its revenue counts in the US rows.
    const us = await store.breakdown('pages', { websiteId: f.website.id, range: null, timezone: 'UTC', filters: ATTRIBUTE_FILTER_SETS[0]! }, PAGES[0]!, MONEY);
    expect(us.rows.find((row) => row.keys.path === '/pricing')).toMatchObject({ visitors: 3, revenueMinor: 4900 });
  });

  it('give the overview the raw read gives, for every filter', async () => {
    const f = await website();
    const store = sqlEventStore(t.db, settleRollups(t));
    for (const filters of ATTRIBUTE_FILTER_SETS) {
      const scope: StatsScope = { websiteId: f.website.id, range: null, timezone: 'UTC', filters };
      const fromProfiles = await store.overview(scope, MONEY);
      expect(fromProfiles, JSON.stringify(filters)).toEqual(await store.overview({ ...scope, range: EVERYTHING }, MONEY));
    }
    // US: v1 (varied on region and city only), v3 (steady) and v8, v9, v11 (varied) with their US events.
    const us = await store.overview({ websiteId: f.website.id, range: null, timezone: 'UTC', filters: ATTRIBUTE_FILTER_SETS[0]! }, MONEY);
    expect(us).toMatchObject({ visitors: 5, convertedVisitors: 2, revenueMinor: 4900, payments: 1 });
    expect(us.sessions).toBeGreaterThan(4);
    expect(us.bounces).toBeGreaterThan(0);
    expect(us.sessionMillis).toBeGreaterThan(0);
    // It reads profile_totals: a change there alone shows.
    await t.db.updateTable('profile_totals').set((eb) => ({ sessions: eb('sessions', '+', 100) })).where('website_id', '=', f.website.id).execute();
    const skewed = await store.overview({ websiteId: f.website.id, range: null, timezone: 'UTC', filters: ATTRIBUTE_FILTER_SETS[0]! }, MONEY);
    expect(skewed.sessions).toBe(us.sessions + 100);
  });

  it('give the funnel the raw read gives, for every filter, steady visitors with all their events', async () => {
    const f = await website();
    const store = sqlEventStore(t.db, settleRollups(t));
    const funnels: FunnelStepSpec[][] = [
      [{ type: 'pageview', url: '/pricing' }, { type: 'goal', goalName: 'signup' }],
      [{ type: 'pageview', url: '/docs' }, { type: 'pageview', url: '/pricing' }, { type: 'goal', goalName: 'signup' }],
    ];
    let reached = 0;
    for (const filters of ATTRIBUTE_FILTER_SETS) {
      const scope: StatsScope = { websiteId: f.website.id, range: EVERYTHING, timezone: 'UTC', filters };
      for (const steps of funnels) {
        const split = await store.funnel(scope, steps, MONEY);
        expect(split, JSON.stringify({ filters, steps })).toEqual(await rawFunnel(t.db, scope, steps, MONEY));
        reached += split.at(-1)!.visitors;
      }
    }
    expect(reached).toBeGreaterThan(0);
    // US: v1 and v3 reached /pricing; v1 (varied on region only) signed up and paid.
    const us = await store.funnel({ websiteId: f.website.id, range: EVERYTHING, timezone: 'UTC', filters: ATTRIBUTE_FILTER_SETS[0]! }, funnels[0]!, MONEY);
    expect(us).toEqual([{ visitors: 3, revenueMinor: 4900 }, { visitors: 1, revenueMinor: 4900 }]);
  });

  it('read the profiles for steady visitors and the raw events for varied ones', async () => {
    const f = await website();
    const store = sqlEventStore(t.db, settleRollups(t));
    const scope: StatsScope = { websiteId: f.website.id, range: null, timezone: 'UTC', filters: ATTRIBUTE_FILTER_SETS[0]! };
    const before = await store.breakdown('pages', scope, PAGES[0]!, MONEY);
    await t.db.updateTable('breakdown_profiles').set((eb) => ({ visitors: eb('visitors', '+', 100) })).where('website_id', '=', f.website.id).where('breakdown', '=', 'pages').execute();
    const skewed = await store.breakdown('pages', scope, PAGES[0]!, MONEY);
    const visitorsOf = (rows: typeof before.rows, path: string) => rows.find((row) => row.keys.path === path)?.visitors;
    // /docs: its US visitors (v8, v9, v11) all varied, so their raw events are read.
    expect(visitorsOf(skewed.rows, '/docs')).toBe(visitorsOf(before.rows, '/docs'));
    // /blog/a: v3 alone, steady: its profile row is what is read.
    expect(visitorsOf(skewed.rows, '/blog/a')).toBe(101);
  });

  it('equal a rebuild after ingestion, a server-goal delete, a session rebuild and the migration', async () => {
    const f = await website();
    const id = f.website.id;
    expect(await variedOf(id, 'v9')).not.toBe(0);
    expect(await variedOf(id, 'v11')).not.toBe(0);
    expect(await variedOf(id, 'v10')).toBe(0);
    const ingested = await profileRows(t.db, id);
    expect(ingested.length).toBeGreaterThan(20);
    await rebuild(id);
    expect(await profileRows(t.db, id)).toEqual(ingested);

    // Deleting v11's server goal makes it steady again: it joins its profile with every row.
    const deleted = await t.request('DELETE', '/api/v1/goals', { token: f.owner.token, query: { websiteId: id, name: 'upgrade' } });
    expect(deleted.status).toBe(200);
    expect(await variedOf(id, 'v11')).toBe(0);
    const repaired = await profileRows(t.db, id);
    expect(repaired.some((row) => row.includes('Dallas'))).toBe(true);
    await rebuild(id);
    expect(await profileRows(t.db, id)).toEqual(repaired);

    await t.db.transaction().execute((trx) => rebuildSessions(trx, id));
    expect(await profileRows(t.db, id)).toEqual(repaired);

    const migration = breakdownProfiles(engine);
    await migrateAndBuild(t, id, 'migration 0017: breakdown_profiles, profile_totals', async () => {
      await migration.down(t.db as unknown as Kysely<unknown>);
      await migration.up(t.db as unknown as Kysely<unknown>);
    });
    expect(await profileRows(t.db, id)).toEqual(repaired);
  });

  it('answer the filtered route from them with the documented pagination', async () => {
    const f = await website();
    const pages = await t.request('GET', '/api/v1/analytics/pages', { token: f.owner.token, query: { websiteId: f.website.id, filter_country: 'US', limit: '2' } });
    expect(pages.status).toBe(200);
    const raw = await t.request('GET', '/api/v1/analytics/pages', {
      token: f.owner.token,
      query: { websiteId: f.website.id, filter_country: 'US', limit: '2', startAt: EVERYTHING.from, endAt: EVERYTHING.to },
    });
    expect(raw.status).toBe(200);
    expect(pages.body).toEqual(raw.body);
    expect(pages.body.pagination).toMatchObject({ limit: 2, offset: 0 });
    expect(pages.body.pagination.total).toBeGreaterThan(2);
  });
});
