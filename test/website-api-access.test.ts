import { expect, it } from 'vitest';
import { type Fixture, MARCH, analyticsFixture } from './helpers/analytics-fixture.ts';
import { useTestApp } from './helpers/app.ts';
import { describeEachEventEngine } from './helpers/clickhouse.ts';
import { UNKNOWN_ID, addMember, createAccount, createApiKey, createToken, createWebsite, expectError } from './helpers/factories.ts';

// Who may read the website API, for which website, and what bad input gets (website-api.md
// sections 1, 2 and 6).

const READS = [
  '/api/v1/analytics/overview',
  '/api/v1/analytics/pages',
  '/api/v1/analytics/entry-pages',
  '/api/v1/analytics/exit-pages',
  '/api/v1/analytics/referrers',
  '/api/v1/analytics/campaigns',
  '/api/v1/analytics/countries',
  '/api/v1/analytics/regions',
  '/api/v1/analytics/cities',
  '/api/v1/analytics/devices',
  '/api/v1/analytics/browsers',
  '/api/v1/analytics/operating-systems',
  '/api/v1/analytics/hostnames',
  '/api/v1/analytics/goals',
  '/api/v1/analytics/exit-clicks',
  '/api/v1/analytics/realtime',
  '/api/v1/analytics/realtime/map',
  '/api/v1/analytics/metadata',
  '/api/v1/visitors',
  '/api/v1/visitors/v1',
];

describeEachEventEngine('website API access', (engine) => {
  const t = useTestApp(engine);
  let f: Fixture;
  it('sets up the fixture', async () => {
    f = await analyticsFixture(t);
  });

  it('answers every read for an account token, a df_ key and the trackingId', async () => {
    const key = await createApiKey(t, f.owner.token, f.website.id);
    for (const path of READS) {
      for (const [token, query] of [
        [f.owner.token, { websiteId: f.website.id }],
        [f.owner.token, { websiteId: f.website.trackingId }],
        [key.key, {}],
      ] as const) {
        const response = await t.request('GET', path, { token, query });
        expect(response.status, `${path} ${response.raw}`).toBe(200);
        expect(response.body.status).toBe('success');
      }
    }
  });

  it('refuses a missing or bad credential with 401', async () => {
    for (const path of READS) {
      const none = await t.request('GET', path, { query: { websiteId: f.website.id } });
      expectError(none, 401);
      const bad = await t.request('GET', path, { token: 'dft_notarealtoken', query: { websiteId: f.website.id } });
      expectError(bad, 401);
    }
  });

  it('answers 404 for another account’s website or an unknown one, id or trackingId alike', async () => {
    const stranger = await createAccount(t);
    for (const websiteId of [f.website.id, f.website.trackingId, UNKNOWN_ID, 'dfid_doesNotExist']) {
      const response = await t.request('GET', '/api/v1/analytics/overview', { token: stranger.token, query: { websiteId } });
      expectError(response, 404);
    }
  });

  it('answers 403 without analytics:read, for a token limited to other websites, and for another website’s df_ key', async () => {
    const narrow = await createToken(t, f.owner, ['websites:read']);
    expectError(await t.request('GET', '/api/v1/analytics/pages', { token: narrow, query: { websiteId: f.website.id } }), 403, /analytics:read/);
    const other = await createWebsite(t, f.owner.token);
    const elsewhere = await createToken(t, f.owner, ['analytics:read'], [other.id]);
    expectError(await t.request('GET', '/api/v1/analytics/pages', { token: elsewhere, query: { websiteId: f.website.id } }), 403);
    const otherKey = await createApiKey(t, f.owner.token, other.id);
    expectError(await t.request('GET', '/api/v1/analytics/pages', { token: otherKey.key, query: { websiteId: f.website.id } }), 403);
  });

  it('lets every role read', async () => {
    const viewer = await createAccount(t);
    await addMember(t, f.website.id, viewer.id, 'viewer');
    const response = await t.request('GET', '/api/v1/analytics/overview', { token: viewer.token, query: { websiteId: f.website.id } });
    expect(response.status, response.raw).toBe(200);
  });

  it('answers 400 naming the parameter for each rule', async () => {
    const cases: Array<[string, Record<string, string>, RegExp]> = [
      ['/api/v1/analytics/overview', { filter_colour: 'red' }, /filter_colour/],
      ['/api/v1/analytics/overview', { filter_country: 'Atlantis' }, /filter_country/],
      ['/api/v1/analytics/overview', { filter_device: 'phone' }, /filter_device/],
      ['/api/v1/analytics/overview', { filter_browser: 'contains:' }, /filter_browser/],
      ['/api/v1/analytics/overview', { filter_page: 'matches:/x' }, /.*/],
      ['/api/v1/analytics/overview', { filter_country: 'is:' }, /filter_country/],
      ['/api/v1/analytics/overview', { startAt: '2026-03-01' }, /endAt/],
      ['/api/v1/analytics/overview', { ...MARCH, endAt: '2026-02-01' }, /endAt/],
      ['/api/v1/analytics/overview', { startAt: 'yesterday', endAt: '2026-03-01' }, /startAt/],
      ['/api/v1/analytics/overview', { timezone: 'Mars/Olympus' }, /timezone/],
      ['/api/v1/analytics/overview', { fields: 'visitors,colour' }, /fields/],
      ['/api/v1/analytics/pages', { limit: '0' }, /limit/],
      ['/api/v1/analytics/pages', { offset: '-1' }, /offset/],
      ['/api/v1/analytics/pages', { limit: 'ten' }, /limit/],
      ['/api/v1/analytics/metadata', { fields: 'owner' }, /fields/],
      ['/api/v1/analytics/goals/properties', {}, /eventName/],
      ['/api/v1/analytics/goals/properties', { eventName: 'Sign Up!' }, /eventName/],
      ['/api/v1/analytics/funnels/nope', {}, /funnelId/],
      ['/api/v1/analytics/overview', { websiteId: 'not-an-id' }, /websiteId/],
    ];
    for (const [path, query, pattern] of cases) {
      const response = await t.request('GET', path, { token: f.owner.token, query: { websiteId: f.website.id, ...query } });
      expectError(response, 400, pattern);
      expect(response.raw).not.toMatch(/at .*\.ts:\d+/);
    }
  });

  it('names the parameters a route ignores', async () => {
    const response = await t.request('GET', '/api/v1/analytics/metadata', { token: f.owner.token, query: { websiteId: f.website.id, startAt: '2026-03-01', limit: '5' } });
    expect(response.status).toBe(200);
    expect(response.headers['x-sightline-ignored-params']).toBe('startAt, limit');
    const used = await t.request('GET', '/api/v1/analytics/pages', { token: f.owner.token, query: { websiteId: f.website.id, limit: '5' } });
    expect(used.headers['x-sightline-ignored-params']).toBeUndefined();
  });

  it('answers 404 for an unknown or inactive funnel and an unknown visitor', async () => {
    expectError(await t.request('GET', `/api/v1/analytics/funnels/${UNKNOWN_ID}`, { token: f.owner.token, query: { websiteId: f.website.id } }), 404);
    expectError(await t.request('GET', '/api/v1/visitors/someone-else', { token: f.owner.token, query: { websiteId: f.website.id } }), 404);
    const other = await analyticsFixture(t);
    // A visitor id seen on another website is unknown here.
    const theirs = await t.request('GET', '/api/v1/visitors/v1', { token: f.owner.token, query: { websiteId: f.website.id } });
    expect(theirs.status).toBe(200);
    expectError(await t.request('GET', '/api/v1/visitors/v1', { token: f.owner.token, query: { websiteId: other.website.id } }), 404);
  });

  it('answers 501, never 404, for what Sightline does not offer', async () => {
    for (const path of ['/api/v1/analytics/bots', '/api/v1/mentions']) {
      const response = await t.request('GET', path, { token: f.owner.token, query: { websiteId: f.website.id } });
      expectError(response, 501, /not available in Sightline/);
    }
    expectError(await t.request('GET', '/api/v1/analytics/bots'), 401);
  });
});
