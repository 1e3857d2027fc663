import { expect, it } from 'vitest';
import { newId } from '../src/lib/ids.ts';
import { insertPaymentOnce } from '../src/modules/events/server-events.repository.ts';
import { type Fixture, MARCH, analyticsFixture } from './helpers/analytics-fixture.ts';
import { type TestApp, useTestApp, writeAndDerive } from './helpers/app.ts';
import { describeEachEventEngine } from './helpers/clickhouse.ts';
import { createAccount, createWebsite, newEvent } from './helpers/factories.ts';

// The visitor list, the visitor page and the realtime map as the hosted service's docs show them
// (website-api.md section 7, issue 32): real clients page the list until pagination.hasMore is
// false, read identity as plain strings and acquisition beside it, read completedGoals and
// timeSinceCurrentVisit on a visitor, and the map's documented fields.

const NO_CAMPAIGN = { utm_source: null, utm_medium: null, utm_campaign: null, utm_term: null, utm_content: null, ref: null, source: null, via: null };

async function get(t: TestApp, f: Fixture, path: string, query: Record<string, string> = {}) {
  return t.request('GET', path, { token: f.owner.token, query: { websiteId: f.website.id, ...query } });
}

async function read(t: TestApp, f: Fixture, path: string, query: Record<string, string> = {}) {
  const response = await get(t, f, path, { ...MARCH, ...query });
  expect(response.status, response.raw).toBe(200);
  return response.body;
}

const ids = (body: { data: Array<{ visitorId: string }> }) => body.data.map((row) => row.visitorId);

describeEachEventEngine('the visitor list, the visitor page and the realtime map as documented', (engine) => {
  const t = useTestApp(engine);
  let f: Fixture;
  it('sets up the fixture', async () => {
    f = await analyticsFixture(t);
  });

  it('lists light rows: lastSeenAt, currentUrl, identity as plain strings, acquisition of the first session', async () => {
    const body = await read(t, f, '/api/v1/visitors');
    expect(body.data).toEqual([
      {
        visitorId: 'v3',
        lastSeenAt: '2026-03-05T09:00:00.000Z',
        currentUrl: `https://${f.website.domain}/`,
        // The OS name is the lead's to relabel; it stays a plain string.
        identity: { country: 'US', region: null, city: null, browser: 'Safari', os: expect.any(String), device: 'desktop' },
        acquisition: { referrer: 'Direct/None', ...NO_CAMPAIGN },
      },
      {
        visitorId: 'v2',
        lastSeenAt: '2026-03-02T11:00:00.000Z',
        currentUrl: `https://${f.website.domain}/pricing`,
        identity: { country: 'DE', region: null, city: null, browser: 'Firefox', os: 'Android', device: 'mobile' },
        acquisition: { referrer: 'Direct/None', ...NO_CAMPAIGN },
      },
      {
        visitorId: 'v1',
        // The outbound click at 10:07 is v1's latest event; its first session came from Google's spring campaign.
        lastSeenAt: '2026-03-02T10:07:00.000Z',
        currentUrl: `https://${f.website.domain}/pricing`,
        identity: { country: 'US', region: null, city: null, browser: 'Chrome', os: 'Windows', device: 'desktop' },
        acquisition: { referrer: 'Google', ...NO_CAMPAIGN, utm_campaign: 'spring' },
      },
    ]);
    expect(body.pagination).toEqual({ limit: 100, offset: 0, total: 3, hasMore: false });
  });

  it('says hasMore while visitors lie past the page, and not at the boundary', async () => {
    expect((await read(t, f, '/api/v1/visitors', { limit: '2' })).pagination).toEqual({ limit: 2, offset: 0, total: 3, hasMore: true });
    const last = await read(t, f, '/api/v1/visitors', { limit: '2', offset: '2' });
    expect(ids(last)).toEqual(['v1']);
    expect(last.pagination).toEqual({ limit: 2, offset: 2, total: 3, hasMore: false });
    expect((await read(t, f, '/api/v1/visitors', { limit: '3' })).pagination.hasMore).toBe(false);
    expect((await read(t, f, '/api/v1/visitors', { limit: '1', offset: '1' })).pagination.hasMore).toBe(true);
    const past = await read(t, f, '/api/v1/visitors', { offset: '10' });
    expect(past.data).toEqual([]);
    expect(past.pagination.hasMore).toBe(false);
  });

  it('takes the documented parameters and their other spellings, beside the filters', async () => {
    expect(ids(await read(t, f, '/api/v1/visitors', { page: '/blog/a' }))).toEqual(['v3']);
    expect(ids(await read(t, f, '/api/v1/visitors', { visitedPage: '/blog/a,/' }))).toEqual(['v3', 'v1']);
    expect(ids(await read(t, f, '/api/v1/visitors', { pageContains: 'blo' }))).toEqual(['v3']);
    expect(ids(await read(t, f, '/api/v1/visitors', { visitedPageContains: 'PRIC' }))).toEqual(['v3', 'v2', 'v1']);
    expect(ids(await read(t, f, '/api/v1/visitors', { goal: 'signup' }))).toEqual(['v1']);
    expect(ids(await read(t, f, '/api/v1/visitors', { isCustomer: 'true' }))).toEqual(['v1']);
    const others = await read(t, f, '/api/v1/visitors', { hasRevenue: 'false' });
    expect(ids(others)).toEqual(['v3', 'v2']);
    expect(others.pagination).toEqual({ limit: 100, offset: 0, total: 2, hasMore: false });
    expect(ids(await read(t, f, '/api/v1/visitors', { isCustomer: 'false', limit: '1', offset: '1' }))).toEqual(['v2']);
    expect(ids(await read(t, f, '/api/v1/visitors', { isCustomer: 'false', visitedPage: '/' }))).toEqual(['v3']);
    expect(ids(await read(t, f, '/api/v1/visitors', { isCustomer: 'false', country: 'US' }))).toEqual(['v3']);
    expect(ids(await read(t, f, '/api/v1/visitors', { filter_device: 'is:mobile', completedGoal: 'signup' }))).toEqual([]);
    // All time: customers and the others, page by page.
    const customers = await get(t, f, '/api/v1/visitors', { isCustomer: 'true' });
    expect(ids(customers.body)).toEqual(['v1']);
    expect(ids((await get(t, f, '/api/v1/visitors', { isCustomer: 'false', limit: '1' })).body)).toEqual(['v3']);
  });

  it('refuses a limit above 250, completedGoal with isCustomer and bad values, naming the field', async () => {
    expect((await get(t, f, '/api/v1/visitors', { limit: '250' })).status).toBe(200);
    const refused: Array<[Record<string, string>, RegExp]> = [
      [{ limit: '251' }, /query\.limit/],
      [{ completedGoal: 'signup', isCustomer: 'true' }, /query\.isCustomer: cannot be combined with completedGoal/],
      [{ goal: 'signup', hasRevenue: 'false' }, /query\.hasRevenue: cannot be combined with completedGoal/],
      [{ isCustomer: 'maybe' }, /query\.isCustomer/],
      [{ visitedPage: '/a', page: '/b' }, /query\.page: is another spelling of visitedPage/],
      [{ visitedPage: Array.from({ length: 51 }, (_, i) => `/p${i}`).join(',') }, /query\.visitedPage: takes at most 50 paths/],
      [{ visitedPage: '/a,,/b' }, /query\.visitedPage/],
      [{ visitedPageContains: ' ' }, /query\.visitedPageContains/],
    ];
    for (const [query, message] of refused) {
      const response = await get(t, f, '/api/v1/visitors', query);
      expect(response.status, JSON.stringify(query)).toBe(400);
      expect(response.body.error.message, JSON.stringify(query)).toMatch(message);
    }
  });

  it("carries completedGoals beside completedCustomGoals and the time since the visitor's current visit", async () => {
    const before = Date.now();
    const v3 = (await get(t, f, '/api/v1/visitors/v3')).body.data.activity;
    // v3's current visit is its second session (03-05 09:00); its first began 45 hours earlier.
    expect(v3.timeSinceFirstVisit - v3.timeSinceCurrentVisit).toBe(45 * 3_600_000);
    expect(Math.abs(v3.timeSinceCurrentVisit - (before - Date.parse('2026-03-05T09:00:00.000Z')))).toBeLessThan(60_000);
    expect(v3.visitCount).toBe(2);

    const v1 = (await get(t, f, '/api/v1/visitors/v1')).body.data.activity;
    expect(v1.completedGoals).toEqual([{ name: 'signup', description: null, timestamp: '2026-03-02T10:06:00.000Z', isServer: false, origin: 'manual' }]);
    expect(v1.completedCustomGoals).toEqual(v1.completedGoals);

    const recorded = await t.request('POST', '/api/v1/goals', {
      token: f.owner.token,
      query: { websiteId: f.website.id },
      body: { datafast_visitor_id: 'v2', name: 'demo_booked', description: 'Booked a demo' },
    });
    expect(recorded.status, recorded.raw).toBe(200);
    const v2 = (await get(t, f, '/api/v1/visitors/v2')).body.data.activity;
    expect(v2.completedGoals).toMatchObject([{ name: 'demo_booked', description: 'Booked a demo', isServer: true, origin: 'manual' }]);
    expect(v2.completedCustomGoals).toEqual(v2.completedGoals);
  });

  it('pages through every visitor with limit 250 and reaches the last one', async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token, `many-${newId().slice(-8)}.example.com`);
    const count = 263;
    const name = (i: number) => `visitor-${String(i).padStart(3, '0')}`;
    await writeAndDerive(
      t,
      Array.from({ length: count }, (_, i) =>
        newEvent(website.id, name(i), { hostname: website.domain, path: '/', occurredAt: new Date(Date.UTC(2026, 2, 10, 0, 0, i)).toISOString() }),
      ),
    );
    // Pages as an export tool reads them: until hasMore is false.
    const exportAll = async (query: Record<string, string>) => {
      const seen: string[] = [];
      const pages: boolean[] = [];
      let offset = 0;
      for (;;) {
        const response = await t.request('GET', '/api/v1/visitors', { token: owner.token, query: { websiteId: website.id, ...query, limit: '250', offset: String(offset) } });
        expect(response.status, response.raw).toBe(200);
        seen.push(...ids(response.body));
        pages.push(response.body.pagination.hasMore);
        if (!response.body.pagination.hasMore) return { seen, pages, total: response.body.pagination.total };
        offset += response.body.data.length;
      }
    };
    for (const range of [{}, MARCH]) {
      const { seen, pages, total } = await exportAll(range);
      expect(pages, JSON.stringify(range)).toEqual([true, false]);
      expect(total).toBe(count);
      expect(seen.length).toBe(count);
      expect(new Set(seen).size).toBe(count);
      // Newest activity first: the last page ends with the first visitor.
      expect(seen.at(-1)).toBe(name(0));
    }

    // Three of them paid, the newest among them: the others page around them.
    const paid = [262, 200, 100];
    for (const i of paid) {
      await t.db.transaction().execute((trx) =>
        insertPaymentOnce(trx, {
          id: newId(),
          website_id: website.id,
          transaction_id: `tx-${newId()}`,
          amount_minor: 1000,
          currency: 'USD',
          visitor_id: name(i),
          email: null,
          renewal: false,
          refunded: false,
          occurred_at: '2026-03-11T00:00:00.000Z',
          created_at: '2026-03-11T00:00:00.000Z',
        }),
      );
    }
    for (const range of [{}, MARCH]) {
      const customers = await exportAll({ ...range, isCustomer: 'true' });
      expect(customers.seen).toEqual(paid.map(name));
      const others = await exportAll({ ...range, isCustomer: 'false' });
      expect(others.pages, JSON.stringify(range)).toEqual([true, false]);
      expect(others.total).toBe(count - paid.length);
      const expected = Array.from({ length: count }, (_, i) => count - 1 - i).filter((i) => !paid.includes(i)).map(name);
      expect(others.seen).toEqual(expected);
    }
  });

  it('answers the realtime map with the documented fields', async () => {
    const live = await analyticsFixture(t);
    const now = Date.now();
    const ago = (seconds: number) => new Date(now - seconds * 1000).toISOString();
    const at = (visitorId: string, occurredAt: string, extra: object = {}) =>
      newEvent(live.website.id, visitorId, { hostname: live.website.domain, path: '/pricing', country: 'FR', browser: 'Firefox', os: 'Linux', device: 'desktop', occurredAt, ...extra });
    const fromGoogle = { details: { referrerSource: 'Google', referrerHost: 'google.com', utmSource: 'news', region: 'Île-de-France', city: 'Paris' } };
    await writeAndDerive(t, [
      at('live-1', ago(120), { path: '/', ...fromGoogle }),
      at('live-1', ago(60), fromGoogle),
      at('live-1', ago(50), { type: 'custom', name: 'signup', metadata: { plan: 'pro' }, ...fromGoogle }),
      at('live-2', ago(90), { sessionId: null, type: 'custom', name: 'demo', path: null, country: null }),
    ]);
    const identified = await t.request('POST', '/api/v1/identify', {
      token: live.owner.token,
      query: { websiteId: live.website.id },
      body: { datafast_visitor_id: 'live-1', user_id: 'user-1', name: 'Ada' },
    });
    expect(identified.status, identified.raw).toBe(200);
    await t.db.transaction().execute((trx) =>
      insertPaymentOnce(trx, {
        id: newId(),
        website_id: live.website.id,
        transaction_id: `tx-${newId()}`,
        amount_minor: 4900,
        currency: 'USD',
        visitor_id: 'live-1',
        email: 'ada@example.com',
        customer_name: 'Ada Lovelace',
        renewal: false,
        refunded: false,
        occurred_at: ago(30),
        created_at: ago(30),
      }),
    );

    const map = await t.request('GET', '/api/v1/analytics/realtime/map', { token: live.owner.token, query: { websiteId: live.website.id } });
    expect(map.status, map.raw).toBe(200);
    const data = map.body.data;
    expect(data.count).toBe(2);
    expect(data.hasConversionPredictions).toBe(false);
    expect(data).not.toHaveProperty('conversionMetrics');
    expect(data.visitors).toEqual([
      {
        visitorId: 'live-1',
        location: { city: 'Paris', region: 'Île-de-France', countryCode: 'FR' },
        system: { browser: { name: 'Firefox' }, os: { name: 'Linux' }, device: { type: 'desktop' } },
        // The goal event names a page too: the latest one with a path is the visitor's current page.
        currentUrl: `https://${live.website.domain}/pricing`,
        referrer: 'Google',
        sessionStartTime: ago(120),
        visitCount: 1,
        params: { ...NO_CAMPAIGN, utm_source: 'news' },
        isCustomer: true,
        customerName: 'Ada Lovelace',
        customerEmail: 'ada@example.com',
        profileData: { displayName: 'Ada', userId: 'user-1', hasProfile: true, isRandomName: false },
      },
      {
        visitorId: 'live-2',
        location: { city: null, region: null, countryCode: null },
        system: { browser: { name: null }, os: { name: null }, device: { type: null } },
        currentUrl: null,
        referrer: null,
        sessionStartTime: null,
        visitCount: 0,
        params: NO_CAMPAIGN,
        isCustomer: false,
        customerName: null,
        customerEmail: null,
        profileData: { displayName: null, userId: null, hasProfile: false, isRandomName: false },
      },
    ]);
    expect(data.recentEvents[0]).toEqual({
      id: expect.any(String),
      _id: data.recentEvents[0].id,
      type: 'custom',
      name: 'signup',
      visitorId: 'live-1',
      timestamp: ago(50),
      path: '/pricing',
      countryCode: 'FR',
      extraData: { plan: 'pro' },
      referrer: 'Google',
      customerName: 'Ada Lovelace',
      amount: null,
      displayName: 'Ada',
    });
    expect(data.recentEvents.map((e: { visitorId: string; extraData: object }) => [e.visitorId, e.extraData])).toEqual([
      ['live-1', { plan: 'pro' }],
      ['live-1', {}],
      ['live-2', {}],
      ['live-1', {}],
    ]);
    expect(data.recentPayments).toEqual([
      {
        id: expect.any(String),
        _id: data.recentPayments[0].id,
        type: 'payment_received',
        timestamp: ago(30),
        amount: 49,
        currency: 'USD',
        customerName: 'Ada Lovelace',
        name: 'Ada Lovelace',
        email: 'ada@example.com',
        renewal: false,
        displayName: 'Ada',
      },
    ]);
  });
}, { withPostgres: true });
