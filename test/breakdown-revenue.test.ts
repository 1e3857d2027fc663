import type { Kysely } from 'kysely';
import { expect, it } from 'vitest';
import { breakdownRevenue } from '../src/db/migrations/0020-breakdown-revenue.ts';
import type { Database } from '../src/db/schema.ts';
import { rebuildBreakdownRollups } from '../src/modules/analytics/breakdown-rollups.ts';
import { rebuildSessions } from '../src/modules/analytics/session-rebuild.ts';
import type { MoneyRules } from '../src/modules/stats/event-store.ts';
import { BREAKDOWNS } from '../src/modules/analytics/breakdowns.ts';
import { SESSION_BREAKDOWNS } from '../src/modules/analytics/breakdown-keys.ts';
import { sqlEventStore } from '../src/modules/stats/sql/sql-event-store.ts';
import type { StatsScope } from '../src/modules/stats/stats.params.ts';
import { analyticsFixture } from './helpers/analytics-fixture.ts';
import { ATTRIBUTE_FILTER_SETS } from './helpers/attribute-filters.ts';
import { settleRollups, useTestApp } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { createApiKey, newEvent } from './helpers/factories.ts';
import { migrateAndBuild } from './helpers/derived-data-worker.ts';

// An all-time breakdown's revenue reads breakdown_revenue (what each key's visitors paid, kept as
// a sum) instead of joining every payment to its visitor's rows. It must say what the raw read
// says, for every breakdown, currency and renewal rule, after each writer that moves either side
// of that join: payments recorded, refunded and deleted; a payer gaining keys and a payer's
// session changing its exit page; a server goal delete; a session rebuild; the migration.

const PAYMENTS = '/api/v1/payments';
const GOALS = '/api/v1/goals';
/** A range around every event of the tests: the same events and payments, read raw. */
const EVERYTHING = { from: '2000-01-01T00:00:00.000Z', to: '2100-01-01T00:00:00.000Z' };
const RULES: MoneyRules[] = [
  { currency: 'USD', includeRenewals: true },
  { currency: 'USD', includeRenewals: false },
  { currency: 'EUR', includeRenewals: true },
];

/** Both tables' rows of a website whose sums are not zero (a rebuild has no row for a zero). */
async function revenueRows(db: Kysely<Database>, websiteId: string) {
  const rows = await db.selectFrom('breakdown_revenue').selectAll().where('website_id', '=', websiteId).where('minor', '<>', 0).execute();
  const profiled = await db.selectFrom('breakdown_profile_revenue').selectAll().where('website_id', '=', websiteId).where('minor', '<>', 0).execute();
  return [
    ...rows.map((row) => JSON.stringify([row.breakdown, row.key, row.currency, Boolean(row.renewal), Number(row.minor)])),
    ...profiled.map((row) => JSON.stringify([row.breakdown, row.key, row.profile, row.currency, Boolean(row.renewal), Number(row.minor)])),
  ].sort();
}

describeEachEngine('breakdown revenue from its rollup', (engine) => {
  const t = useTestApp(engine);

  /**
   * Every breakdown's all-time rows (revenue included), unfiltered and filtered on visitor
   * attributes, equal the raw read, and both tables a rebuild.
   */
  async function expectConsistent(websiteId: string) {
    const store = sqlEventStore(t.db, settleRollups(t));
    const page = { limit: 100, offset: 0 };
    for (const filters of [[], ...ATTRIBUTE_FILTER_SETS]) {
      const scope: StatsScope = { websiteId, range: null, timezone: 'UTC', filters };
      for (const kind of BREAKDOWNS) {
        for (const money of RULES) {
          const label = `${kind} ${JSON.stringify(money)} ${JSON.stringify(filters)}`;
          expect(await store.breakdown(kind, scope, page, money), label).toEqual(await store.breakdown(kind, { ...scope, range: EVERYTHING }, page, money));
        }
      }
    }
    const kept = await revenueRows(t.db, websiteId);
    await t.db.transaction().execute((trx) => rebuildBreakdownRollups(trx, websiteId));
    expect(await revenueRows(t.db, websiteId)).toEqual(kept);
    return kept;
  }

  async function payers() {
    const f = await analyticsFixture(t);
    const key = (await createApiKey(t, f.owner.token, f.website.id)).key;
    const pay = async (body: Record<string, unknown>) => {
      const response = await t.request('POST', PAYMENTS, { token: key, body });
      expect(response.status, response.raw).toBe(200);
    };
    // v1 paid 49.00 USD in the fixture; v3 pays twice (once a renewal), v2 in euros; one payment
    // names a visitor never seen, one names none.
    await pay({ transaction_id: 'tx-v3', amount: 10, currency: 'USD', datafast_visitor_id: 'v3' });
    await pay({ transaction_id: 'tx-v3-renewal', amount: 5, currency: 'USD', datafast_visitor_id: 'v3', renewal: true });
    await pay({ transaction_id: 'tx-v2', amount: 20, currency: 'EUR', datafast_visitor_id: 'v2' });
    await pay({ transaction_id: 'tx-ghost', amount: 3, currency: 'USD', datafast_visitor_id: 'ghost' });
    await pay({ transaction_id: 'tx-anonymous', amount: 4, currency: 'USD' });
    return { ...f, key, pay };
  }

  it('says what the raw read says after payments are recorded, refunded and deleted', async () => {
    const { website, key, pay } = await payers();
    const recorded = await expectConsistent(website.id);
    // v3's 10.00 and 5.00 reach each of v3's keys, e.g. the /blog/a page only v3 viewed.
    const store = sqlEventStore(t.db, settleRollups(t));
    const pages = await store.breakdown('pages', { websiteId: website.id, range: null, timezone: 'UTC', filters: [] }, { limit: 100, offset: 0 }, RULES[0]!);
    expect(pages.rows.find((row) => row.keys.path === '/blog/a')?.revenueMinor).toBe(1500);

    await pay({ transaction_id: 'tx-v3', amount: 10, currency: 'USD', datafast_visitor_id: 'v3', refunded: true });
    const refunded = await expectConsistent(website.id);
    expect(refunded).not.toEqual(recorded);

    const deleted = await t.request('DELETE', PAYMENTS, { token: key, query: { datafast_visitor_id: 'v2' } });
    expect(deleted.status, deleted.raw).toBe(200);
    expect(deleted.body.data[0].deleted).toBe(1);
    expect((await expectConsistent(website.id)).some((row) => row.includes('"EUR"'))).toBe(false);
  });

  it('follows a payer who gains keys, whose session moves its exit page, and whose server goal is deleted', async () => {
    const { website, owner, pay } = await payers();
    const id = website.id;
    await pay({ transaction_id: 'tx-v2-usd', amount: 7, currency: 'USD', datafast_visitor_id: 'v2' });
    // v3 comes back from France on a new page (its attributes vary: it leaves its profile); v1's
    // session grows, so its exit page moves from /pricing to /thanks; v2, with the attributes it
    // had (steady), grows its session the same way and comes back on a new page; v3 completes a
    // server goal.
    const v2 = { hostname: website.domain, country: 'DE', browser: 'Firefox', os: 'Android', device: 'mobile', details: { referrerSource: 'Direct/None', referrerHost: null } };
    await t.app.events.write([
      newEvent(id, 'v3', { sessionId: 's5', hostname: website.domain, path: '/new', country: 'FR', occurredAt: '2026-03-09T10:00:00.000Z' }),
      newEvent(id, 'v1', { sessionId: 's1', hostname: website.domain, path: '/thanks', country: 'US', occurredAt: '2026-03-02T10:20:00.000Z' }),
    ]);
    await t.app.events.write([newEvent(id, 'v2', { ...v2, sessionId: 's2', path: '/v2-later', occurredAt: '2026-03-02T11:05:00.000Z' })]);
    await t.app.events.write([newEvent(id, 'v2', { ...v2, sessionId: 's2b', path: '/v2-new', occurredAt: '2026-03-08T09:00:00.000Z' })]);
    const steady = await t.db.selectFrom('visitor_totals').select('varied').where('website_id', '=', id).where('visitor_id', '=', 'v2').executeTakeFirstOrThrow();
    expect(Number(steady.varied)).toBe(0);
    const goal = await t.request('POST', `${GOALS}?websiteId=${id}`, { token: owner.token, body: { visitorId: 'v3', name: 'upgrade' } });
    expect(goal.status, goal.raw).toBe(200);
    const grown = await expectConsistent(id);
    expect(grown.some((row) => row.includes('/new'))).toBe(true);
    expect(grown.some((row) => row.includes('/v2-new') && row.includes('DE'))).toBe(true);
    expect(grown.some((row) => row.includes('upgrade'))).toBe(true);

    const deleted = await t.request('DELETE', GOALS, { token: owner.token, query: { websiteId: id, name: 'upgrade' } });
    expect(deleted.status, deleted.raw).toBe(200);
    expect((await expectConsistent(id)).some((row) => row.includes('upgrade'))).toBe(false);

    // The session rebuild (bulk loads, whose sessions had no rows) derives the session breakdowns' revenue again.
    const before = await revenueRows(t.db, id);
    await t.db.deleteFrom('breakdown_revenue').where('website_id', '=', id).where('breakdown', 'in', SESSION_BREAKDOWNS).execute();
    await t.db.deleteFrom('breakdown_profile_revenue').where('website_id', '=', id).where('breakdown', 'in', SESSION_BREAKDOWNS).execute();
    await t.db.transaction().execute((trx) => rebuildSessions(trx, id));
    expect(await revenueRows(t.db, id)).toEqual(before);
  });

  it('is read from the table, and migration 0020 derives it from stored rows and payments', async () => {
    const { website } = await payers();
    const id = website.id;
    const kept = await expectConsistent(id);
    const migration = breakdownRevenue(engine);
    const untyped = t.db as unknown as Kysely<unknown>;
    await migrateAndBuild(t, id, 'migration 0020: breakdown_revenue, breakdown_profile_revenue', async () => {
      await migration.down(untyped);
      await migration.up(untyped);
    });
    expect(await revenueRows(t.db, id)).toEqual(kept);

    // A change to the table alone shows in the all-time read, not in the raw one.
    await t.db.updateTable('breakdown_revenue').set((eb) => ({ minor: eb('minor', '+', 100) })).where('website_id', '=', id).where('breakdown', '=', 'countries').execute();
    const scope: StatsScope = { websiteId: id, range: null, timezone: 'UTC', filters: [] };
    const skewed = await sqlEventStore(t.db, settleRollups(t)).breakdown('countries', scope, { limit: 100, offset: 0 }, RULES[0]!);
    const raw = await sqlEventStore(t.db, settleRollups(t)).breakdown('countries', { ...scope, range: EVERYTHING }, { limit: 100, offset: 0 }, RULES[0]!);
    const us = (rows: typeof raw.rows) => rows.find((row) => row.keys.countryCode === 'US')!.revenueMinor;
    expect(us(skewed.rows)).toBeGreaterThan(us(raw.rows));
    // The same for a read filtered on visitor attributes, from the profiles' sums.
    await t.db.updateTable('breakdown_profile_revenue').set((eb) => ({ minor: eb('minor', '+', 100) })).where('website_id', '=', id).where('breakdown', '=', 'pages').execute();
    const filtered: StatsScope = { ...scope, filters: [{ dimension: 'country', operator: 'is', values: ['US'] }] };
    const skewedPages = await sqlEventStore(t.db, settleRollups(t)).breakdown('pages', filtered, { limit: 100, offset: 0 }, RULES[0]!);
    const rawPages = await sqlEventStore(t.db, settleRollups(t)).breakdown('pages', { ...filtered, range: EVERYTHING }, { limit: 100, offset: 0 }, RULES[0]!);
    const total = (rows: typeof raw.rows) => rows.reduce((sum, row) => sum + row.revenueMinor, 0);
    expect(total(skewedPages.rows)).toBeGreaterThan(total(rawPages.rows));
  });
});
