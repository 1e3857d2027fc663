import type { Kysely } from 'kysely';
import { expect, it } from 'vitest';
import { breakdownRollups } from '../src/db/migrations/0013-breakdown-rollups.ts';
import { breakdownDays } from '../src/db/migrations/0019-breakdown-days.ts';
import { breakdownRevenue } from '../src/db/migrations/0020-breakdown-revenue.ts';
import { paymentConversions } from '../src/db/migrations/0028-payment-conversions.ts';
import { sessionBreakdownRollups } from '../src/db/migrations/0014-session-breakdown-rollups.ts';
import type { Database } from '../src/db/schema.ts';
import { rebuildBreakdownRollups } from '../src/modules/analytics/breakdown-rollups.ts';
import { rebuildSessions } from '../src/modules/analytics/session-rebuild.ts';
import type { NewEvent } from '../src/modules/events/event.types.ts';
import { BREAKDOWNS } from '../src/modules/analytics/breakdowns.ts';
import { sqlEventStore } from '../src/modules/stats/sql/sql-event-store.ts';
import type { StatsScope } from '../src/modules/stats/stats.params.ts';
import { analyticsFixture } from './helpers/analytics-fixture.ts';
import { settleRollups, useTestApp, writeAndDerive } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { newEvent } from './helpers/factories.ts';
import { migrateAndBuild } from './helpers/derived-data-worker.ts';

// An all-time breakdown without filters reads breakdown_totals instead of the raw events or
// sessions; it must say exactly what they say (rows, order, totals, pages), and the rollups must
// equal a rebuild from the raw events and sessions after ingestion (sessions that grow across
// writes), a server goal delete, a session rebuild and the migrations.

const MONEY = { currency: 'USD', includeRenewals: true };
/** A range around every event of the tests: the same events, read from the raw table. */
const EVERYTHING = { from: '2000-01-01T00:00:00.000Z', to: '2100-01-01T00:00:00.000Z' };

/** The rollup rows of a website, in a stable order. */
async function rollupRows(db: Kysely<Database>, websiteId: string) {
  const sorted = (rows: object[]) => rows.map((row) => JSON.stringify(Object.entries(row).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v]))).sort();
  return {
    visitors: sorted(await db.selectFrom('breakdown_visitors').selectAll().where('website_id', '=', websiteId).execute()),
    totals: sorted(await db.selectFrom('breakdown_totals').selectAll().where('website_id', '=', websiteId).execute()),
    days: sorted(await db.selectFrom('breakdown_days').selectAll().where('website_id', '=', websiteId).execute()),
    // A day whose visitors all came back later keeps a row of 0, which a rebuild has no row for.
    lastDays: sorted(await db.selectFrom('breakdown_last_days').selectAll().where('website_id', '=', websiteId).where('visitors', '<>', 0).execute()),
    // A key whose paying visitors left it keeps a row of 0, which a rebuild has no row for.
    revenue: sorted(await db.selectFrom('breakdown_revenue').selectAll().where('website_id', '=', websiteId).where('minor', '<>', 0).execute()),
  };
}

/** Traffic with ties, unknown values, several hostnames and events of every kind, beside the fixture's. */
function moreTraffic(websiteId: string, domain: string): NewEvent[] {
  const at = (visitorId: string, occurredAt: string, extra: Partial<NewEvent>) =>
    newEvent(websiteId, visitorId, { sessionId: `s-${visitorId}`, hostname: domain, occurredAt, ...extra });
  return [
    at('v4', '2026-03-06T08:00:00.000Z', { path: '/docs', country: 'FR', browser: 'Chrome', os: 'Linux', device: 'desktop', details: { region: 'Ile-de-France', city: 'Paris' } }),
    at('v4', '2026-03-06T08:01:00.000Z', { path: '/docs', country: 'FR', browser: 'Chrome', os: 'Linux', device: 'desktop' }),
    // A second session of v4's under the same entry page and source as its first.
    at('v4', '2026-03-06T12:00:00.000Z', { sessionId: 's-v4-b', path: '/docs', country: 'FR' }),
    at('v5', '2026-03-06T09:00:00.000Z', { path: '/docs', hostname: `blog.${domain}` }),
    at('v5', '2026-03-06T09:01:00.000Z', { type: 'custom', name: 'newsletter', path: null, hostname: null }),
    at('v6', '2026-03-07T09:00:00.000Z', { path: '/Docs', country: 'FR', browser: 'Chrome', os: 'Linux', device: 'desktop', details: { region: 'Ile-de-France', city: 'Lyon' } }),
    // A key that JSON must escape, to be read back exactly.
    at('v6', '2026-03-07T09:02:00.000Z', { path: '/say "hi"\\ü\u0001', country: 'FR' }),
    at('v6', '2026-03-07T09:05:00.000Z', { type: 'external_link', path: '/Docs', country: 'FR', details: { linkUrl: 'https://x.example.org/' } }),
    newEvent(websiteId, 'v7', { type: 'custom', name: 'upgrade', source: 'api', sessionId: null, hostname: null, path: null, occurredAt: '2026-03-08T10:00:00.000Z' }),
    // Written later: v4's first session grows, and its exit page moves from /docs to /pricing.
    at('v4', '2026-03-06T08:30:00.000Z', { path: '/pricing', country: 'FR' }),
  ];
}

describeEachEngine('breakdowns from rollups', (engine) => {
  const t = useTestApp(engine);

  async function website() {
    const f = await analyticsFixture(t);
    // Two writes: one batch of several events, and one that adds to what the first stored.
    const extra = moreTraffic(f.website.id, f.website.domain);
    await writeAndDerive(t, extra.slice(0, 5));
    await writeAndDerive(t, extra.slice(5));
    return f;
  }

  it('says what the raw events and sessions say, for every breakdown and page of rows', async () => {
    const f = await website();
    const store = sqlEventStore(t.db, settleRollups(t));
    const scope: StatsScope = { websiteId: f.website.id, range: null, timezone: 'UTC', filters: [] };
    for (const kind of BREAKDOWNS) {
      for (const page of [{ limit: 100, offset: 0 }, { limit: 2, offset: 1 }, { limit: 5, offset: 50 }]) {
        const fromRollups = await store.breakdown(kind, scope, page, MONEY);
        const fromEvents = await store.breakdown(kind, { ...scope, range: EVERYTHING }, page, MONEY);
        expect(fromRollups, `${kind} ${JSON.stringify(page)}`).toEqual(fromEvents);
      }
      expect((await store.breakdown(kind, scope, { limit: 100, offset: 0 }, MONEY)).rows.length).toBeGreaterThan(1);
    }
    const pages = await store.breakdown('pages', scope, { limit: 100, offset: 0 }, MONEY);
    expect(pages.rows.some((row) => row.keys.path === '/say "hi"\\ü\u0001')).toBe(true);
    // The revenue column still comes from the payments: v1 paid 49.00 and browsed from the US.
    const countries = await store.breakdown('countries', scope, { limit: 100, offset: 0 }, MONEY);
    expect(countries.rows.find((row) => row.keys.countryCode === 'US')).toMatchObject({ visitors: 2, revenueMinor: 4900 });

    // It really read them: a change to the rollup alone shows in the all-time read, not in the raw one.
    await t.db.updateTable('breakdown_totals').set((eb) => ({ visitors: eb('visitors', '+', 100) })).where('website_id', '=', f.website.id).where('breakdown', '=', 'browsers').execute();
    const skewed = await store.breakdown('browsers', scope, { limit: 100, offset: 0 }, MONEY);
    const raw = await store.breakdown('browsers', { ...scope, range: EVERYTHING }, { limit: 100, offset: 0 }, MONEY);
    expect(skewed.rows.map((row) => row.visitors - 100).sort()).toEqual(raw.rows.map((row) => row.visitors).sort());
    // The same for a breakdown over sessions.
    await t.db.updateTable('breakdown_totals').set((eb) => ({ visitors: eb('visitors', '+', 100) })).where('website_id', '=', f.website.id).where('breakdown', '=', 'referrers').execute();
    const skewedReferrers = await store.breakdown('referrers', scope, { limit: 100, offset: 0 }, MONEY);
    expect(skewedReferrers.rows.every((row) => row.visitors > 100)).toBe(true);
  });

  it('answers the routes from the rollups with the documented shape', async () => {
    const f = await website();
    const pages = await t.request('GET', '/api/v1/analytics/pages', { token: f.owner.token, query: { websiteId: f.website.id, limit: '3' } });
    expect(pages.status).toBe(200);
    expect(pages.body.pagination).toEqual({ limit: 3, offset: 0, total: 7 });
    // /pricing: v1, v2, v3, v4; then / (v1, v3); then /docs, whose one visitor viewed it three times.
    expect(pages.body.data.map((row: { path: string; visitors: number }) => [row.path, row.visitors])).toEqual([
      ['/pricing', 4],
      ['/', 2],
      ['/docs', 1],
    ]);
  });

  it('equal a rebuild after ingestion, a server goal delete, a session rebuild and the build the migrations mark', async () => {
    const f = await website();
    const id = f.website.id;
    const ingested = await rollupRows(t.db, id);
    expect(ingested.totals.length).toBeGreaterThan(10);
    await t.db.transaction().execute((trx) => rebuildBreakdownRollups(trx, id));
    expect(await rollupRows(t.db, id)).toEqual(ingested);

    // v7's only event is a server goal: deleting it removes v7 from every key it had.
    const deleted = await t.request('DELETE', '/api/v1/goals', { token: f.owner.token, query: { websiteId: id, name: 'upgrade' } });
    expect(deleted.status).toBe(200);
    const repaired = await rollupRows(t.db, id);
    expect(repaired.visitors.some((row) => row.includes('"v7"'))).toBe(false);
    await t.db.transaction().execute((trx) => rebuildBreakdownRollups(trx, id));
    expect(await rollupRows(t.db, id)).toEqual(repaired);

    // The session rebuild (bulk loads) leaves the session breakdowns as ingestion kept them.
    await t.db.transaction().execute((trx) => rebuildSessions(trx, id));
    expect(await rollupRows(t.db, id)).toEqual(repaired);
    const referrers = await sqlEventStore(t.db, settleRollups(t)).breakdown('referrers', { websiteId: id, range: null, timezone: 'UTC', filters: [] }, { limit: 100, offset: 0 }, MONEY);
    // v2 (one pageview) and v3 (two sessions, three pageviews) came direct.
    expect(referrers.rows.find((row) => row.keys.referrer === 'Direct/None')).toMatchObject({ visitors: 2, pageviews: 4 });

    const untyped = t.db as unknown as Kysely<unknown>;
    // 0028 keys breakdown_revenue by converted currency: undone before 0020, done again after it.
    const migrations = [breakdownRollups(engine), sessionBreakdownRollups(), breakdownDays(engine), breakdownRevenue(engine), paymentConversions(engine)];
    // The migrations only mark the build (src/db/migrations/derived-builds.ts); the server runs it.
    await migrateAndBuild(t, id, 'migration 0013: breakdown_visitors, breakdown_totals', async () => {
      for (const migration of [...migrations].reverse()) await migration.down(untyped);
      for (const migration of migrations) await migration.up(untyped);
    });
    expect(await rollupRows(t.db, id)).toEqual(repaired);
  });
});
