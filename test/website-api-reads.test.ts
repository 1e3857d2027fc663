import { expect, it } from 'vitest';
import { type Fixture, MARCH, analyticsFixture } from './helpers/analytics-fixture.ts';
import { type TestApp, useTestApp } from './helpers/app.ts';
import { describeEachEventEngine } from './helpers/clickhouse.ts';

// The website API's analytics reads over a known dataset: shapes, numbers, filters, pagination.

async function read(t: TestApp, f: Fixture, path: string, query: Record<string, string> = {}) {
  const response = await t.request('GET', path, { token: f.owner.token, query: { websiteId: f.website.id, ...MARCH, ...query } });
  expect(response.status, response.raw).toBe(200);
  return response.body;
}

describeEachEventEngine('website API reads', (engine) => {
  const t = useTestApp(engine);
  let f: Fixture;
  it('sets up the fixture', async () => {
    f = await analyticsFixture(t);
  });

  it('answers the overview with every metric', async () => {
    const body = await read(t, f, '/api/v1/analytics/overview');
    expect(body.data).toEqual([
      {
        visitors: 3,
        sessions: 4,
        pageviews: 6,
        bounce_rate: 50,
        avg_session_duration: 255_000,
        currency: 'USD',
        revenue: 49,
        payments: 1,
        revenue_per_visitor: 16.33,
        conversion_rate: 33.33,
      },
    ]);
  });

  it('agrees with the time series on visitors for the same range', async () => {
    const overview = await read(t, f, '/api/v1/analytics/overview', { fields: 'visitors' });
    const series = await read(t, f, '/api/v1/analytics/timeseries', { fields: 'visitors,pageviews', interval: 'day' });
    expect(overview.data).toEqual([{ visitors: 3 }]);
    expect(series.totals.visitors).toBe(3);
    expect(series.totals.pageviews).toBe(6);
  });

  it('breaks pages down with rows that add up to the overview pageviews', async () => {
    const body = await read(t, f, '/api/v1/analytics/pages');
    expect(body.data).toEqual([
      { hostname: f.website.domain, path: '/pricing', visitors: 3, pageviews: 3, revenue: 49 },
      { hostname: f.website.domain, path: '/', visitors: 2, pageviews: 2, revenue: 49 },
      { hostname: f.website.domain, path: '/blog/a', visitors: 1, pageviews: 1, revenue: 0 },
    ]);
    expect(body.pagination).toEqual({ limit: 100, offset: 0, total: 3 });
    expect(body.data.reduce((sum: number, row: { pageviews: number }) => sum + row.pageviews, 0)).toBe(6);
  });

  it('pages through a breakdown', async () => {
    const body = await read(t, f, '/api/v1/analytics/pages', { limit: '1', offset: '1' });
    expect(body.data.map((row: { path: string }) => row.path)).toEqual(['/']);
    expect(body.pagination).toEqual({ limit: 1, offset: 1, total: 3 });
    const past = await read(t, f, '/api/v1/analytics/pages', { offset: '10' });
    expect(past.data).toEqual([]);
    expect(past.pagination).toEqual({ limit: 100, offset: 10, total: 3 });
  });

  it('answers the other breakdowns', async () => {
    expect((await read(t, f, '/api/v1/analytics/referrers')).data).toEqual([
      { referrer: 'Direct/None', visitors: 2, pageviews: 4, revenue: 0 },
      { referrer: 'Google', visitors: 1, pageviews: 2, revenue: 49 },
    ]);
    expect((await read(t, f, '/api/v1/analytics/countries')).data).toEqual([
      { country: 'United States', countryCode: 'US', image: `${t.config.publicUrl}/flags/us.svg`, visitors: 2, pageviews: 5, revenue: 49 },
      { country: 'Germany', countryCode: 'DE', image: `${t.config.publicUrl}/flags/de.svg`, visitors: 1, pageviews: 1, revenue: 0 },
    ]);
    expect((await read(t, f, '/api/v1/analytics/devices')).data.map((r: { device: string; visitors: number }) => [r.device, r.visitors])).toEqual([
      ['desktop', 2],
      ['mobile', 1],
    ]);
    expect((await read(t, f, '/api/v1/analytics/goals')).data).toEqual([{ goal: 'signup', completions: 1, visitors: 1, revenue: 49 }]);
    expect((await read(t, f, '/api/v1/analytics/exit-clicks')).data).toEqual([{ url: 'https://github.com/acme', clicks: 1, visitors: 1 }]);
    const campaigns = (await read(t, f, '/api/v1/analytics/campaigns')).data;
    // Every row's campaign holds all eight keys as strings, "" when unset (a client reads
    // campaign.utm_source on every row); direct traffic is the all-"" row, never null.
    const unset = { utm_source: '', utm_medium: '', utm_campaign: '', utm_term: '', utm_content: '', ref: '', source: '', via: '' };
    expect(campaigns).toEqual([
      { campaign: unset, visitors: 2, pageviews: 4, revenue: 0 },
      { campaign: { ...unset, utm_campaign: 'spring' }, visitors: 1, pageviews: 2, revenue: 49 },
    ]);
    expect((await read(t, f, '/api/v1/analytics/entry-pages')).data.map((r: { path: string; visitors: number }) => [r.path, r.visitors])).toEqual([
      ['/', 2],
      ['/blog/a', 1],
      ['/pricing', 1],
    ]);
    const regions = (await read(t, f, '/api/v1/analytics/regions')).data;
    expect(regions).toContainEqual({ region: 'California', countryCode: 'US', visitors: 1, pageviews: 2, revenue: 49 });
    // Unknown regions share one row per country.
    expect(regions.filter((r: { region: string | null }) => r.region === null).map((r: { countryCode: string }) => r.countryCode).sort()).toEqual(['DE', 'US']);
    // Cities the same way: the dashboard names each unknown row by its country ("Germany (city unknown)").
    const cities = (await read(t, f, '/api/v1/analytics/cities')).data;
    expect(cities).toContainEqual({ city: 'San Jose', countryCode: 'US', visitors: 1, pageviews: 2, revenue: 49 });
    expect(cities.filter((r: { city: string | null }) => r.city === null).map((r: { countryCode: string }) => r.countryCode).sort()).toEqual(['DE', 'US']);
  });

  it('filters with filter_ names and their aliases, AND-ed', async () => {
    const us = await read(t, f, '/api/v1/analytics/overview', { filter_country: 'is:US', fields: 'visitors,pageviews' });
    expect(us.data).toEqual([{ visitors: 2, pageviews: 5 }]);
    const byName = await read(t, f, '/api/v1/analytics/overview', { country: 'United States', fields: 'visitors' });
    expect(byName.data).toEqual([{ visitors: 2 }]);
    const notUs = await read(t, f, '/api/v1/analytics/overview', { filter_country: 'is_not:US', fields: 'visitors' });
    expect(notUs.data).toEqual([{ visitors: 1 }]);
    const two = await read(t, f, '/api/v1/analytics/pages', { filter_country: 'US', filter_browser: 'Safari' });
    expect(two.data.map((r: { path: string }) => r.path).sort()).toEqual(['/', '/blog/a', '/pricing']);
    const pricing = await read(t, f, '/api/v1/analytics/pages', { filter_page: 'contains:PRIC' });
    expect(pricing.data.map((r: { path: string }) => r.path)).toEqual(['/pricing']);
    const wildcard = await read(t, f, '/api/v1/analytics/pages', { filter_page: '/blog/*' });
    expect(wildcard.data.map((r: { path: string }) => r.path)).toEqual(['/blog/a']);
    const google = await read(t, f, '/api/v1/analytics/pages', { filter_referrer: 'Google' });
    expect(google.data.map((r: { path: string; visitors: number }) => [r.path, r.visitors])).toEqual([
      ['/', 1],
      ['/pricing', 1],
    ]);
    const converted = await read(t, f, '/api/v1/analytics/overview', { filter_goal: 'signup', fields: 'visitors,revenue' });
    expect(converted.data).toEqual([{ visitors: 1, revenue: 49 }]);
    const campaign = await read(t, f, '/api/v1/analytics/countries', { utm_campaign: 'spring' });
    expect(campaign.data.map((r: { countryCode: string }) => r.countryCode)).toEqual(['US']);
  });

  it('counts, when filtered, the sessions that hold an event in scope, with all their events', async () => {
    const fields = 'sessions,bounce_rate,avg_session_duration';
    // s1 (7 min), s3 (10 min) and s4 (a bounce) are American.
    const us = await read(t, f, '/api/v1/analytics/overview', { filter_country: 'US', fields });
    expect(us.data).toEqual([{ sessions: 3, bounce_rate: 33.33, avg_session_duration: 340_000 }]);
    const safari = await read(t, f, '/api/v1/analytics/overview', { filter_browser: 'Safari', fields });
    expect(safari.data).toEqual([{ sessions: 2, bounce_rate: 50, avg_session_duration: 300_000 }]);
    // A session that viewed /pricing keeps its other pageviews: s1 and s3 are no bounces.
    const pricing = await read(t, f, '/api/v1/analytics/overview', { filter_page: '/pricing', fields });
    expect(pricing.data).toEqual([{ sessions: 3, bounce_rate: 33.33, avg_session_duration: 340_000 }]);
    const entries = await read(t, f, '/api/v1/analytics/entry-pages', { filter_country: 'US' });
    expect(entries.data.map((r: { path: string; visitors: number }) => [r.path, r.visitors])).toEqual([
      ['/', 2],
      ['/blog/a', 1],
    ]);
  });

  it("answers a goal's properties", async () => {
    const body = await read(t, f, '/api/v1/analytics/goals/properties', { eventName: 'signup' });
    expect(body.data).toEqual([{ property: 'plan', value: 'pro', completions: 1, visitors: 1 }]);
  });

  it('answers the website metadata, fields picked', async () => {
    const all = await read(t, f, '/api/v1/analytics/metadata');
    expect(all.data[0]).toMatchObject({ domain: f.website.domain, currency: 'USD', kpi: null, kpiColorScheme: null, logo: null });
    expect(Object.keys(all.data[0]).sort()).toEqual(['currency', 'domain', 'kpi', 'kpiColorScheme', 'logo', 'name', 'timezone']);
    const some = await read(t, f, '/api/v1/analytics/metadata', { fields: 'domain,currency' });
    expect(some.data).toEqual([{ domain: f.website.domain, currency: 'USD' }]);
  });

  it('answers a funnel report', async () => {
    const created = await t.request('POST', `/api/v1/admin/websites/${f.website.id}/funnels`, {
      token: f.owner.token,
      body: { name: 'Signup', steps: [{ name: 'Pricing', type: 'pageview', url: '/pricing' }, { name: 'Signed up', type: 'goal', goalName: 'signup' }] },
    });
    expect(created.status, created.raw).toBe(200);
    const funnel = created.body.data[0];
    const body = await read(t, f, `/api/v1/analytics/funnels/${funnel.id}`);
    expect(body.data).toEqual([
      {
        funnelId: funnel.id,
        name: 'Signup',
        visitors: 3,
        conversionRate: 33.33,
        steps: [
          { id: funnel.steps[0].id, name: 'Pricing', type: 'pageview', visitors: 3, conversionRate: 100, dropOff: 0, revenue: 49 },
          { id: funnel.steps[1].id, name: 'Signed up', type: 'goal', visitors: 1, conversionRate: 33.33, dropOff: 66.67, revenue: 49 },
        ],
      },
    ]);
    await t.request('DELETE', `/api/v1/admin/websites/${f.website.id}/funnels/${funnel.id}`, { token: f.owner.token });
    const gone = await t.request('GET', `/api/v1/analytics/funnels/${funnel.id}`, { token: f.owner.token, query: { websiteId: f.website.id } });
    expect(gone.status).toBe(404);
  });

  it("answers a visitor's page, and 404 for a visitor the website has not seen", async () => {
    const body = await read(t, f, '/api/v1/visitors/v1');
    expect(body.data).toMatchObject({
      visitorId: 'v1',
      identity: { country: 'United States', countryCode: 'US', browser: { name: 'Chrome' }, device: { type: 'desktop' }, params: { utm_campaign: 'spring' } },
      activity: {
        visitCount: 1,
        pageViewCount: 2,
        firstVisitAt: '2026-03-02T10:00:00.000Z',
        lastVisitAt: '2026-03-02T10:07:00.000Z',
        currentUrl: `https://${f.website.domain}/pricing`,
        completedCustomGoals: [{ name: 'signup', timestamp: '2026-03-02T10:06:00.000Z', isServer: false }],
      },
      profile: null,
      prediction: null,
    });
    expect(body.data.activity.visitedPages.map((p: { url: string }) => p.url)).toEqual([`https://${f.website.domain}/pricing`, `https://${f.website.domain}/`]);
    const unknown = await t.request('GET', '/api/v1/visitors/nobody', { token: f.owner.token, query: { websiteId: f.website.id } });
    expect(unknown.status).toBe(404);
  });

  it("shows an identified visitor's profile", async () => {
    const identified = await t.request('POST', '/api/v1/identify', {
      token: f.owner.token,
      query: { websiteId: f.website.id },
      body: { datafast_visitor_id: 'v2', user_id: 'user-42', name: 'Ada', plan: 'pro' },
    });
    expect(identified.status, identified.raw).toBe(200);
    const body = await read(t, f, '/api/v1/visitors/v2');
    expect(body.data.profile).toMatchObject({ userId: 'user-42', name: 'Ada', image: null, metadata: { plan: 'pro' } });
  });

  it('lists visitors newest activity first, filtered and paged', async () => {
    const body = await read(t, f, '/api/v1/visitors');
    expect(body.data.map((v: { visitorId: string }) => v.visitorId)).toEqual(['v3', 'v2', 'v1']);
    expect(body.pagination).toEqual({ limit: 100, offset: 0, total: 3, hasMore: false });
    expect(body.data[0].lastSeenAt).toBe('2026-03-05T09:00:00.000Z');
    const goal = await read(t, f, '/api/v1/visitors', { completedGoal: 'signup' });
    expect(goal.data.map((v: { visitorId: string }) => v.visitorId)).toEqual(['v1']);
    const page = await read(t, f, '/api/v1/visitors', { visitedPage: '/blog/*', limit: '1' });
    expect(page.data.map((v: { visitorId: string }) => v.visitorId)).toEqual(['v3']);
    expect(page.pagination.total).toBe(1);
  });

  it('answers realtime counts and the live map for recent events', async () => {
    const live = await analyticsFixture(t);
    const now = new Date().toISOString();
    await t.app.events.write([
      { ...(await import('./helpers/factories.ts')).newEvent(live.website.id, 'live-1', { occurredAt: now, path: '/now', hostname: live.website.domain, country: 'FR' }) },
    ]);
    const count = await t.request('GET', '/api/v1/analytics/realtime', { token: live.owner.token, query: { websiteId: live.website.id, timezone: 'UTC' } });
    expect(count.status, count.raw).toBe(200);
    expect(count.body.data).toEqual([{ visitors: 1 }]);
    expect(count.headers['x-sightline-ignored-params']).toBe('timezone');
    const map = await t.request('GET', '/api/v1/analytics/realtime/map', { token: live.owner.token, query: { websiteId: live.website.id } });
    expect(map.status, map.raw).toBe(200);
    expect(map.body.data).toMatchObject({
      count: 1,
      visitors: [{ visitorId: 'live-1', location: { countryCode: 'FR' }, currentUrl: `https://${live.website.domain}/now`, visitCount: 1, isCustomer: false }],
      recentEvents: [{ type: 'pageview', visitorId: 'live-1', path: '/now', countryCode: 'FR' }],
      recentPayments: [],
    });
  });

  it("gives a live visitor their visit's source, not the site itself after a full-page click", async () => {
    const live = await analyticsFixture(t);
    const { newEvent } = await import('./helpers/factories.ts');
    const at = (ms: number) => new Date(Date.now() - ms).toISOString();
    const host = live.website.domain;
    await t.app.events.write([
      newEvent(live.website.id, 'from-google', { sessionId: 'visit-g', occurredAt: at(60_000), path: '/', hostname: host, referrer: 'https://www.google.com/', details: { referrerHost: 'www.google.com', referrerSource: 'Google', utmCampaign: 'spring' } }),
      // The next page of the same visit: the browser sends the site's own page as the referrer.
      newEvent(live.website.id, 'from-google', { sessionId: 'visit-g', occurredAt: at(30_000), path: '/pricing', hostname: host, referrer: `https://${host}/`, details: { referrerHost: host, referrerSource: null } }),
    ]);
    const map = await t.request('GET', '/api/v1/analytics/realtime/map', { token: live.owner.token, query: { websiteId: live.website.id } });
    expect(map.status, map.raw).toBe(200);
    const visitor = map.body.data.visitors.find((v: { visitorId: string }) => v.visitorId === 'from-google');
    expect(visitor).toMatchObject({ currentUrl: `https://${host}/pricing`, referrer: 'Google', params: { utm_campaign: 'spring' } });
  });
}, { withPostgres: true });

describeEachEventEngine('website API time series additions', (engine) => {
  const t = useTestApp(engine);
  let f: Fixture;
  it('sets up the fixture', async () => {
    f = await analyticsFixture(t);
  });

  it('filters the series and keeps its totals equal to the filtered overview', async () => {
    const query = { fields: 'name,visitors,pageviews,revenue', interval: 'day', filter_country: 'US' };
    const series = await read(t, f, '/api/v1/analytics/timeseries', query);
    // With revenue asked for, the totals carry its breakdown by kind too, as each bucket does.
    expect(series.totals).toEqual({ visitors: 2, pageviews: 5, revenue: 49, revenueBreakdown: { new: 49, renewal: 0, refund: 0 } });
    const overview = await read(t, f, '/api/v1/analytics/overview', { filter_country: 'US', fields: 'visitors,pageviews,revenue' });
    const { revenueBreakdown: _, ...counts } = series.totals;
    expect(overview.data).toEqual([counts]);
    const germany = await read(t, f, '/api/v1/analytics/timeseries', { ...query, filter_country: 'DE' });
    expect(germany.totals).toEqual({ visitors: 1, pageviews: 1, revenue: 0, revenueBreakdown: { new: 0, renewal: 0, refund: 0 } });
  });

  it('pages over the buckets in time order, totals over the whole range', async () => {
    const series = await read(t, f, '/api/v1/analytics/timeseries', { fields: 'visitors', interval: 'day', limit: '2', offset: '1' });
    expect(series.data.map((p: { name: string }) => p.name)).toEqual(['2026-03-02', '2026-03-03']);
    expect(series.pagination).toEqual({ limit: 2, offset: 1, total: 31 });
    expect(series.totals).toEqual({ visitors: 3 });
  });

  it('names the parameters it ignores', async () => {
    const response = await t.request('GET', '/api/v1/analytics/timeseries', {
      token: f.owner.token,
      query: { websiteId: f.website.id, fields: 'visitors', interval: 'day', period: '30d' },
    });
    expect(response.status, response.raw).toBe(200);
    expect(response.headers['x-sightline-ignored-params']).toBe('period');
  });
});

describeEachEventEngine('website API reads after a server goal is deleted', (engine) => {
  const t = useTestApp(engine);

  it('shows a server goal everywhere, then nowhere once it is deleted', async () => {
    const f = await analyticsFixture(t);
    const query = { websiteId: f.website.id };
    const recorded = await t.request('POST', '/api/v1/goals', { token: f.owner.token, query, body: { datafast_visitor_id: 'v2', name: 'demo_booked' } });
    expect(recorded.status, recorded.raw).toBe(200);
    // Recorded now, so read all time.
    const allTime = (path: string, extra: Record<string, string> = {}) => t.request('GET', path, { token: f.owner.token, query: { ...query, ...extra } });
    const goals = async () => (await allTime('/api/v1/analytics/goals')).body.data.map((row: { goal: string }) => row.goal).sort();
    const visitorGoals = async () => (await allTime('/api/v1/visitors/v2')).body.data.activity.completedCustomGoals;
    const converted = async () => (await allTime('/api/v1/analytics/overview', { fields: 'conversion_rate' })).body.data[0].conversion_rate;

    expect(await goals()).toEqual(['demo_booked', 'signup']);
    expect(await visitorGoals()).toMatchObject([{ name: 'demo_booked', isServer: true }]);
    expect(await converted()).toBe(66.67);

    const deleted = await t.request('DELETE', '/api/v1/goals', { token: f.owner.token, query: { ...query, name: 'demo_booked' } });
    expect(deleted.status, deleted.raw).toBe(200);
    expect(deleted.body.data).toEqual([{ message: expect.any(String), deleted: 1, goal_name: 'demo_booked' }]);
    expect(await goals()).toEqual(['signup']);
    expect(await visitorGoals()).toEqual([]);
    expect(await converted()).toBe(33.33);
    const tracked = await t.request('GET', `/api/v1/admin/websites/${f.website.id}/goals`, { token: f.owner.token });
    expect(tracked.body.data.map((row: { goalName: string }) => row.goalName)).toEqual(['signup']);
  });
}, { withPostgres: true });
