import type { Kysely } from 'kysely';
import { expect, it } from 'vitest';
import { breakdownRevenue } from '../src/db/migrations/0020-breakdown-revenue.ts';
import { paymentConversions } from '../src/db/migrations/0028-payment-conversions.ts';
import { recordPayment } from '../src/modules/events/server-events.service.ts';
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
  // The owner's rates: GBP's loses to the provider's conversion into USD, JPY's applies.
  { currency: 'USD', includeRenewals: true, rates: [{ currency: 'GBP', factor: 2 }, { currency: 'JPY', factor: 0.67 }] },
];

/** Both tables' rows of a website whose sums are not zero (a rebuild has no row for a zero). */
async function revenueRows(db: Kysely<Database>, websiteId: string) {
  const rows = await db.selectFrom('breakdown_revenue').selectAll().where('website_id', '=', websiteId).where((eb) => eb.or([eb('minor', '<>', 0), eb('converted_minor', '<>', 0)])).execute();
  const profiled = await db.selectFrom('breakdown_profile_revenue').selectAll().where('website_id', '=', websiteId).where((eb) => eb.or([eb('minor', '<>', 0), eb('converted_minor', '<>', 0)])).execute();
  const converted = (row: { converted_currency: string; converted_minor: number }) => [row.converted_currency, Number(row.converted_minor)];
  return [
    ...rows.map((row) => JSON.stringify([row.breakdown, row.key, row.currency, Boolean(row.renewal), Number(row.minor), ...converted(row)])),
    ...profiled.map((row) => JSON.stringify([row.breakdown, row.key, row.profile, row.currency, Boolean(row.renewal), Number(row.minor), ...converted(row)])),
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
        // The owner's rates (the last rules) are read unfiltered only: the same sums, fewer reads.
        for (const money of filters.length === 0 ? RULES : RULES.slice(0, 3)) {
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
    // Payments the provider converted (webhooks and imports record them so): v1 pays 8.00 GBP that
    // came to 10.40 USD, v3 1500 JPY that came to 9.10 EUR. v1's was first recorded without its
    // conversion (a Stripe webhook), which the history import then brings: the sums move with it.
    const gbp = { transaction_id: 'tx-v1-gbp', amount: 8, currency: 'GBP', datafast_visitor_id: 'v1' };
    await recordPayment(t.db, f.website.id, gbp);
    await recordPayment(t.db, f.website.id, gbp, { amountMinor: 1040, currency: 'USD' });
    await recordPayment(t.db, f.website.id, gbp, { amountMinor: 9999, currency: 'USD' }); // a conversion is kept once
    await recordPayment(t.db, f.website.id, { transaction_id: 'tx-v3-jpy', amount: 1500, currency: 'JPY', datafast_visitor_id: 'v3' }, { amountMinor: 910, currency: 'EUR' });
    return { ...f, key, pay };
  }

  it('says what the raw read says after payments are recorded, refunded and deleted', async () => {
    const { website, key, pay } = await payers();
    const recorded = await expectConsistent(website.id);
    // v3's 10.00 and 5.00 reach each of v3's keys, e.g. the /blog/a page only v3 viewed.
    const store = sqlEventStore(t.db, settleRollups(t));
    const pages = await store.breakdown('pages', { websiteId: website.id, range: null, timezone: 'UTC', filters: [] }, { limit: 100, offset: 0 }, RULES[0]!);
    expect(pages.rows.find((row) => row.keys.path === '/blog/a')?.revenueMinor).toBe(1500);
    // In EUR, v3's keys count the provider's 9.10 EUR for its JPY payment (and nothing of its USD ones).
    const inEuros = await store.breakdown('pages', { websiteId: website.id, range: null, timezone: 'UTC', filters: [] }, { limit: 100, offset: 0 }, RULES[2]!);
    expect(inEuros.rows.find((row) => row.keys.path === '/blog/a')?.revenueMinor).toBe(910);
    // At the owner's rates in USD: v3's 15.00 USD and 1500 JPY × 0.67; v1's GBP payment counts the provider's 10.40 USD, not 2 × 8.00.
    const rated = await store.breakdown('pages', { websiteId: website.id, range: null, timezone: 'UTC', filters: [] }, { limit: 100, offset: 0 }, RULES[3]!);
    expect(rated.rows.find((row) => row.keys.path === '/blog/a')?.revenueMinor).toBe(1500 + 1005);
    expect(recorded.some((row) => row.includes('"GBP",false,800,"USD",1040'))).toBe(true);

    await pay({ transaction_id: 'tx-v3', amount: 10, currency: 'USD', datafast_visitor_id: 'v3', refunded: true });
    const refunded = await expectConsistent(website.id);
    expect(refunded).not.toEqual(recorded);

    const deleted = await t.request('DELETE', PAYMENTS, { token: key, query: { datafast_visitor_id: 'v2' } });
    expect(deleted.status, deleted.raw).toBe(200);
    expect(deleted.body.data[0].deleted).toBe(1);
    // No payment in EUR is left (v3's JPY payment is still kept under its conversion into EUR).
    const left = await expectConsistent(website.id);
    expect(left.some((row) => /"EUR",(true|false)/.test(row))).toBe(false);
    expect(left.some((row) => row.includes('"JPY",false,1500,"EUR",910'))).toBe(true);
  }, 90_000);

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
    const conversions = paymentConversions(engine);
    const untyped = t.db as unknown as Kysely<unknown>;
    const converted = await t.db.selectFrom('payments').select(['id', 'converted_minor', 'converted_currency']).where('website_id', '=', id).where('converted_currency', 'is not', null).execute();
    expect(converted).toHaveLength(2);
    await migrateAndBuild(t, id, 'migration 0020: breakdown_revenue, breakdown_profile_revenue', async () => {
      // 0028 keys the tables by converted currency: undone first, done again after (it copies the
      // rows; the payments' conversions, which its undoing drops, are put back as they were).
      await conversions.down(untyped);
      await migration.down(untyped);
      await migration.up(untyped);
      await conversions.up(untyped);
      for (const row of converted) await t.db.updateTable('payments').set({ converted_minor: row.converted_minor, converted_currency: row.converted_currency }).where('id', '=', row.id).execute();
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
