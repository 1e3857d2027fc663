import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { type TestApp, settleRollups, useTestApp } from './helpers/app.ts';
import { pageview, send } from './helpers/browser-events.ts';
import { describeEachEventEngine } from './helpers/clickhouse.ts';
import { type TestAccount, createAccount, createApiKey, createWebsite } from './helpers/factories.ts';

// Issue 35 item 2: a goal or payment recorded through the API carries no session of its own,
// yet it belongs to its visitor's session in every filtered read: with source = Google, the
// Google visitor's server-recorded goal is there, and with source is not Google it is not.

interface Fixture {
  owner: TestAccount;
  websiteId: string;
}

const DAY = 86_400_000;
const ranges: Record<string, Record<string, string>> = {
  'a range of days': {
    startAt: new Date(Date.now() - 2 * DAY).toISOString().slice(0, 10),
    endAt: new Date(Date.now() + DAY).toISOString().slice(0, 10),
  },
  'all time': {},
};

async function read(t: TestApp, f: Fixture, path: string, query: Record<string, string>) {
  const response = await t.request('GET', path, { token: f.owner.token, query: { websiteId: f.websiteId, ...query } });
  expect(response.status, response.raw).toBe(200);
  return response.body.data;
}

describeEachEventEngine('server goals and payments in filtered reads', (engine) => {
  const t = useTestApp(engine);
  let f: Fixture;

  it('sets up a Google visitor with a server goal and a payment, and a direct one with neither', async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const key = await createApiKey(t, owner.token, website.id);
    const google = randomUUID();
    const direct = randomUUID();
    const sent = await send(t, pageview(website, { visitorId: google, referrer: 'https://www.google.com/', href: `https://${website.domain}/?utm_campaign=spring` }));
    expect(sent.status).toBe(200);
    expect((await send(t, pageview(website, { visitorId: direct, referrer: '', href: `https://${website.domain}/about` }))).status).toBe(200);
    const goal = await t.request('POST', '/api/v1/goals', { token: key.key, body: { datafast_visitor_id: google, name: 'signup' } });
    expect(goal.status, goal.raw).toBe(200);
    const paid = await t.request('POST', '/api/v1/payments', { token: key.key, body: { datafast_visitor_id: google, amount: 30, currency: 'USD', transaction_id: `tx-${google}` } });
    expect(paid.status, paid.raw).toBe(200);
    f = { owner, websiteId: website.id };
    await settleRollups(t)();
  });

  for (const [name, range] of Object.entries(ranges)) {
    it(`keeps the server goal with its visitor's source, campaign and entry page, over ${name}`, async () => {
      const goals = (query: Record<string, string>) => read(t, f, '/api/v1/analytics/goals', { ...range, ...query });
      const signup = [{ goal: 'signup', completions: 1, visitors: 1, revenue: 30 }];
      expect(await goals({})).toEqual(signup);
      expect(await goals({ filter_referrer: 'Google' })).toEqual(signup);
      expect(await goals({ filter_utm_campaign: 'spring' })).toEqual(signup);
      expect(await goals({ filter_entry_page: '/' })).toEqual(signup);
      expect(await goals({ filter_referrer: 'is_not:Google' })).toEqual([]);
      expect(await goals({ filter_entry_page: '/about' })).toEqual([]);
    });

    it(`counts the goal's converting visitor and the payment under the visitor's source, over ${name}`, async () => {
      const overview = (query: Record<string, string>) => read(t, f, '/api/v1/analytics/overview', { ...range, fields: 'visitors,revenue,conversion_rate', ...query });
      expect(await overview({ filter_referrer: 'Google' })).toEqual([{ visitors: 1, revenue: 30, conversion_rate: 100 }]);
      expect(await overview({ filter_referrer: 'is_not:Google' })).toEqual([{ visitors: 1, revenue: 0, conversion_rate: 0 }]);
      expect(await overview({ filter_goal: 'signup', filter_referrer: 'Google' })).toEqual([{ visitors: 1, revenue: 30, conversion_rate: 100 }]);
    });

    it(`gives the time series the same conversions under the visitor's source, over ${name}`, async () => {
      const series = async (query: Record<string, string>) => {
        const response = await t.request('GET', '/api/v1/analytics/timeseries', {
          token: f.owner.token,
          query: { websiteId: f.websiteId, fields: 'visitors,conversion_rate', interval: 'month', ...range, ...query },
        });
        expect(response.status, response.raw).toBe(200);
        return response.body.totals;
      };
      expect(await series({ filter_referrer: 'Google' })).toMatchObject({ visitors: 1, conversion_rate: 100 });
      expect(await series({ filter_referrer: 'is_not:Google' })).toMatchObject({ visitors: 1, conversion_rate: 0 });
    });
  }
});
