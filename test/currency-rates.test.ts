import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type TestApp, settleRollups, useTestApp } from './helpers/app.ts';
import { pageview, send } from './helpers/browser-events.ts';
import { describeEachEventEngine } from './helpers/clickhouse.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { UNKNOWN_ID, addMember, createAccount, createApiKey, createToken, createWebsite, expectError } from './helpers/factories.ts';
import { recordPayment } from '../src/modules/events/server-events.service.ts';

// Issue 35 item 3: payments in another currency than the website's counted 0 with no word. The
// owner sets a rate per currency; every revenue read counts those payments at it, past ones
// included, and the rates' list says which currencies still count nothing.

const rates = (websiteId: string) => `/api/v1/admin/websites/${websiteId}/currency-rates`;
const DAY = 86_400_000;
const RANGES: Record<string, Record<string, string>> = {
  'a range of days': {
    startAt: new Date(Date.now() - 2 * DAY).toISOString().slice(0, 10),
    endAt: new Date(Date.now() + DAY).toISOString().slice(0, 10),
  },
  'all time': {},
};

describeEachEventEngine('revenue in other currencies, at the rates the owner sets', (engine) => {
  const t = useTestApp(engine);
  let owner: Awaited<ReturnType<typeof createAccount>>;
  let websiteId: string;
  let funnelId: string;

  async function read(path: string, query: Record<string, string>) {
    const response = await t.request('GET', path, { token: owner.token, query: { websiteId, ...query } });
    expect(response.status, response.raw).toBe(200);
    return response.body;
  }
  const put = (currency: string, rate: number) => t.request('PUT', `${rates(websiteId)}/${currency}`, { token: owner.token, body: { rate } });

  it('sets up a USD website with a Google visitor paying in USD, EUR, JPY and GBP', async () => {
    owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    websiteId = website.id;
    const key = await createApiKey(t, owner.token, website.id);
    const visitor = randomUUID();
    expect((await send(t, pageview(website, { visitorId: visitor, referrer: 'https://www.google.com/' }))).status).toBe(200);
    const pay = async (amount: number, currency: string, extra: Record<string, unknown> = {}) => {
      const response = await t.request('POST', '/api/v1/payments', {
        token: key.key,
        body: { datafast_visitor_id: visitor, amount, currency, transaction_id: `tx-${currency}-${randomUUID()}`, ...extra },
      });
      expect(response.status, response.raw).toBe(200);
    };
    await pay(10, 'USD');
    await pay(20, 'EUR');
    await pay(1000, 'JPY');
    await pay(5, 'GBP');
    await pay(7, 'EUR', { refunded: true });
    const created = await t.request('POST', `/api/v1/admin/websites/${websiteId}/funnels`, { token: owner.token, body: { name: 'Visit', steps: [{ type: 'pageview', url: '/*' }, { type: 'pageview', url: '/*' }] } });
    expect(created.status, created.raw).toBe(200);
    funnelId = created.body.data[0].id;
    await settleRollups(t)();
  });

  it('counts only USD and lists EUR, GBP and JPY as not converted while no rate is set', async () => {
    expect((await read('/api/v1/analytics/overview', { fields: 'revenue,payments' })).data).toEqual([{ revenue: 10, payments: 1 }]);
    const listed = await t.request('GET', rates(websiteId), { token: owner.token });
    expect(listed.body).toEqual({
      status: 'success',
      data: [],
      currency: 'USD',
      unconverted: [
        { currency: 'EUR', payments: 1, amount: 20 },
        { currency: 'GBP', payments: 1, amount: 5 },
        { currency: 'JPY', payments: 1, amount: 1000 },
      ],
    });
  });

  it('sets rates, in any case of the code, and lists them with what is still not converted', async () => {
    const eur = await put('eur', 1.1);
    expect(eur.status, eur.raw).toBe(200);
    expect(eur.body.data).toEqual([{ currency: 'EUR', rate: 1.1, updatedAt: expect.stringMatching(/^\d{4}-/) }]);
    expect((await put('JPY', 0.0067)).status).toBe(200);
    const listed = await t.request('GET', rates(websiteId), { token: owner.token });
    expect(listed.body.data.map((r: { currency: string; rate: number }) => [r.currency, r.rate])).toEqual([
      ['EUR', 1.1],
      ['JPY', 0.0067],
    ]);
    expect(listed.body.unconverted).toEqual([{ currency: 'GBP', payments: 1, amount: 5 }]);
  });

  for (const [name, range] of Object.entries(RANGES)) {
    it(`counts EUR and JPY payments at their rates in the overview, breakdowns, time series and funnel, over ${name}`, async () => {
      // 10 USD + 20 EUR × 1.1 + 1000 JPY × 0.0067; GBP has no rate, the refunded EUR payment never counts.
      const total = 10 + 22 + 6.7;
      expect((await read('/api/v1/analytics/overview', { ...range, fields: 'revenue,payments' })).data).toEqual([{ revenue: total, payments: 3 }]);
      expect((await read('/api/v1/analytics/referrers', range)).data).toEqual([expect.objectContaining({ referrer: 'Google', revenue: total })]);
      expect((await read('/api/v1/analytics/overview', { ...range, fields: 'revenue', filter_referrer: 'Google' })).data).toEqual([{ revenue: total }]);
      expect((await read('/api/v1/analytics/countries', { ...range, filter_referrer: 'Google' })).data[0].revenue).toBe(total);
      const series = await read('/api/v1/analytics/timeseries', { ...range, fields: 'revenue,payments', interval: 'month' });
      expect(series.totals).toMatchObject({ revenue: total, payments: 3 });
      if (Object.keys(range).length > 0) {
        const funnel = await read(`/api/v1/analytics/funnels/${funnelId}`, range);
        expect(funnel.data[0].steps[0]).toMatchObject({ visitors: 1, revenue: total });
      }
    });
  }

  it('counts nothing of a currency again once its rate is deleted, and a rate set for another website currency does not apply', async () => {
    const deleted = await t.request('DELETE', `${rates(websiteId)}/JPY`, { token: owner.token });
    expect(deleted.body.data).toEqual([{ message: expect.stringContaining('JPY'), deleted: true }]);
    expect((await t.request('DELETE', `${rates(websiteId)}/JPY`, { token: owner.token })).body.data[0].deleted).toBe(false);
    expect((await read('/api/v1/analytics/overview', { fields: 'revenue' })).data).toEqual([{ revenue: 32 }]);
    // The EUR rate was set while the website counted in USD: in GBP it is not a rate into GBP.
    const changed = await t.request('PUT', `/api/v1/admin/websites/${websiteId}`, { token: owner.token, body: { currency: 'GBP' } });
    expect(changed.status, changed.raw).toBe(200);
    expect((await read('/api/v1/analytics/overview', { fields: 'revenue' })).data).toEqual([{ revenue: 5 }]);
    const listed = await t.request('GET', rates(websiteId), { token: owner.token });
    expect(listed.body).toMatchObject({ data: [], currency: 'GBP' });
    expect(listed.body.unconverted.map((r: { currency: string }) => r.currency)).toEqual(['EUR', 'JPY', 'USD']);
  });
});

describeEachEventEngine("revenue the provider converted into the website's currency", (engine) => {
  const t = useTestApp(engine);
  let owner: Awaited<ReturnType<typeof createAccount>>;
  let websiteId: string;

  async function read(path: string, query: Record<string, string>) {
    const response = await t.request('GET', path, { token: owner.token, query: { websiteId, ...query } });
    expect(response.status, response.raw).toBe(200);
    return response.body;
  }
  const put = (currency: string, rate: number) => t.request('PUT', `${rates(websiteId)}/${currency}`, { token: owner.token, body: { rate } });
  const unconverted = async () => (await t.request('GET', rates(websiteId), { token: owner.token })).body.unconverted;

  /** The overview, a breakdown (referrers: from its rollup over all time) and the time series agree on `revenue`. */
  async function expectRevenue(revenue: number, payments: number) {
    for (const range of Object.values(RANGES)) {
      expect((await read('/api/v1/analytics/overview', { ...range, fields: 'revenue,payments' })).data).toEqual([{ revenue, payments }]);
      expect((await read('/api/v1/analytics/referrers', range)).data).toEqual([expect.objectContaining({ referrer: 'Google', revenue })]);
      expect((await read('/api/v1/analytics/countries', { ...range, filter_referrer: 'Google' })).data[0].revenue).toBe(revenue);
      const series = await read('/api/v1/analytics/timeseries', { ...range, fields: 'revenue,payments', interval: 'month' });
      expect(series.totals).toMatchObject({ revenue, payments });
      const buckets = (series.data as { revenue: number }[]).reduce((sum, bucket) => sum + bucket.revenue, 0);
      expect(Math.round(buckets * 100) / 100).toBe(revenue);
    }
  }

  it('sets up a USD website whose Google visitor paid 10 USD, 30 CHF the provider converted to 33.50 USD, and 20 EUR it converted to 18 GBP', async () => {
    owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    websiteId = website.id;
    const visitor = randomUUID();
    expect((await send(t, pageview(website, { visitorId: visitor, referrer: 'https://www.google.com/' }))).status).toBe(200);
    // The path a provider's webhook or history import takes (recordPayment with the adapter's conversion).
    const pay = (amount: number, currency: string, converted?: { amountMinor: number; currency: string }) =>
      recordPayment(t.db, websiteId, { datafast_visitor_id: visitor, amount, currency, transaction_id: `tx-${currency}-${randomUUID()}` }, converted);
    await pay(10, 'USD');
    await pay(30, 'CHF', { amountMinor: 3350, currency: 'USD' });
    await pay(20, 'EUR', { amountMinor: 1800, currency: 'GBP' });
    await settleRollups(t)();
  });

  it("counts the provider's 33.50 USD for the CHF payment everywhere, and lists only EUR as not converted", async () => {
    await expectRevenue(43.5, 2);
    expect(await unconverted()).toEqual([{ currency: 'EUR', payments: 1, amount: 20 }]);
  });

  it("prefers the provider's conversion to the owner's rate, which applies to the EUR payment converted into another currency", async () => {
    expect((await put('CHF', 2)).status).toBe(200);
    expect((await put('EUR', 1.1)).status).toBe(200);
    await expectRevenue(43.5 + 22, 3);
    expect(await unconverted()).toEqual([]);
  });

  it("counts the EUR payment's 18 GBP once the website counts in GBP, the rollup included, and lists what no longer converts", async () => {
    const changed = await t.request('PUT', `/api/v1/admin/websites/${websiteId}`, { token: owner.token, body: { currency: 'GBP' } });
    expect(changed.status, changed.raw).toBe(200);
    await expectRevenue(18, 1);
    expect(await unconverted()).toEqual([
      { currency: 'CHF', payments: 1, amount: 30 },
      { currency: 'USD', payments: 1, amount: 10 },
    ]);
  });
});

describeEachEngine('the currency-rates routes', (engine) => {
  const t = useTestApp(engine);

  async function setUp(t: TestApp) {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    return { owner, website };
  }

  it('refuses bad input with a 400 naming the field, and changes nothing', async () => {
    const { owner, website } = await setUp(t);
    const cases: Array<[string, unknown, RegExp]> = [
      ['EUR', { rate: 0 }, /body\.rate/],
      ['EUR', { rate: -1 }, /body\.rate/],
      ['EUR', { rate: 'a lot' }, /body\.rate/],
      ['EUR', {}, /body\.rate/],
      ['EUR', { rate: 1, extra: true }, /extra/],
      ['EUR', { rate: 2e9 }, /body\.rate/],
      ['XYZ', { rate: 1 }, /path\.currency/],
      ['EURO', { rate: 1 }, /path\.currency/],
      ['USD', { rate: 1 }, /path\.currency.*website's own currency/],
    ];
    for (const [currency, body, message] of cases) {
      expectError(await t.request('PUT', `${rates(website.id)}/${currency}`, { token: owner.token, body }), 400, message);
    }
    expectError(await t.request('DELETE', `${rates(website.id)}/XYZ`, { token: owner.token }), 400, /path\.currency/);
    expect(await t.db.selectFrom('currency_rates').selectAll().where('website_id', '=', website.id).execute()).toEqual([]);
  });

  it('answers 401 without a credential, 403 without the permission, as a viewer or out of scope, 404 for another account', async () => {
    const { owner, website } = await setUp(t);
    const other = await setUp(t);
    const viewer = await createAccount(t);
    await addMember(t, website.id, viewer.id, 'viewer');
    const readOnly = await createToken(t, owner, ['settings:read']);
    const elsewhere = await createToken(t, owner, ['settings:read', 'settings:write'], [other.website.id]);
    const member = await createAccount(t);
    await addMember(t, website.id, member.id, 'member');
    const calls: Array<[string, string, unknown]> = [
      ['GET', rates(website.id), undefined],
      ['PUT', `${rates(website.id)}/EUR`, { rate: 1.1 }],
      ['DELETE', `${rates(website.id)}/EUR`, undefined],
    ];
    for (const [method, url, body] of calls) {
      expectError(await t.request(method, url, { body }), 401);
      expectError(await t.request(method, url, { token: elsewhere, body }), 403);
      expectError(await t.request(method, url, { token: other.owner.token, body }), 404);
      expectError(await t.request(method, url.replace(website.id, UNKNOWN_ID), { token: owner.token, body }), 404);
      if (method !== 'GET') {
        expectError(await t.request(method, url, { token: readOnly, body }), 403);
        expectError(await t.request(method, url, { token: viewer.token, body }), 403);
      }
    }
    expect((await t.request('GET', rates(website.id), { token: viewer.token })).status).toBe(200);
    expect((await t.request('GET', rates(website.id), { token: readOnly })).status).toBe(200);
    expect((await t.request('PUT', `${rates(website.id)}/EUR`, { token: member.token, body: { rate: 1.1 } })).status).toBe(200);
    const key = await createApiKey(t, owner.token, website.id);
    expect((await t.request('PUT', `${rates(website.id)}/GBP`, { token: key.key, body: { rate: 1.3 } })).status).toBe(200);
  });
});

describe('minor unit factors', () => {
  it('turn a rate between currencies of different minor digits into minor units', async () => {
    const { minorUnitFactor } = await import('../src/lib/money.ts');
    expect(minorUnitFactor(1.1, 'EUR', 'USD')).toBeCloseTo(1.1);
    expect(minorUnitFactor(0.0067, 'JPY', 'USD')).toBeCloseTo(0.67);
    expect(minorUnitFactor(150, 'USD', 'JPY')).toBeCloseTo(1.5);
    expect(minorUnitFactor(3.3, 'KWD', 'USD')).toBeCloseTo(0.33);
  });
});
