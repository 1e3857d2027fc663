import { describe, expect, it } from 'vitest';
import { type ApiResponse, useTestApp } from './helpers/app.ts';
import { UNKNOWN_ID, addMember, createAccount, createApiKey, createToken, createWebsite } from './helpers/factories.ts';

// Routes of the hosted service that Sightline does not offer answer 501 in the envelope, never
// 404 (website-api.md sections 6 and 7). The bot-traffic routes as the hosted docs list them,
// written out here so the test holds the code to the docs rather than to itself.

const W = '/api/v1/admin/websites/{websiteId}';
const BOT_TRAFFIC_ROUTES = [
  'GET /api/v1/analytics/bot-traffic',
  'GET /api/v1/analytics/bot-traffic/pages',
  `GET ${W}/bot-traffic/settings`,
  `PATCH ${W}/bot-traffic/settings`,
  `GET ${W}/bot-traffic/token`,
  `POST ${W}/bot-traffic/token`,
  `PUT ${W}/bot-traffic/token`,
  `DELETE ${W}/bot-traffic/token`,
  'GET /api/v1/admin/bot-traffic/usage',
];
/** Any other method or path under the same prefixes answers the same. */
const UNDER_THE_PREFIXES = [
  'POST /api/v1/analytics/bot-traffic/pages',
  'GET /api/v1/analytics/bot-traffic/crawlers/daily',
  `GET ${W}/bot-traffic`,
  `DELETE ${W}/bot-traffic/settings`,
  'PUT /api/v1/admin/bot-traffic/usage',
  'GET /api/v1/admin/bot-traffic',
];
const MENTIONS_ROUTES = ['GET /api/v1/mentions', 'GET /api/v1/analytics/mentions', 'GET /api/v1/social-mentions', 'GET /api/v1/analytics/bots'];

function expectNotOffered(response: ApiResponse, route: string, feature: RegExp) {
  expect(response.status, `${route}: ${response.raw}`).toBe(501);
  expect(response.body, route).toEqual({
    status: 'error',
    error: { code: 501, message: expect.stringMatching(feature), requestId: expect.any(String) },
  });
  expect(response.body.error.message).toMatch(/is not available in Sightline/);
}

describe('routes of the hosted service that Sightline does not offer', () => {
  const t = useTestApp('sqlite');

  async function ownerWithWebsite() {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    return { owner, website };
  }
  const split = (route: string, websiteId: string) => {
    const [method, path] = route.split(' ') as [string, string];
    return [method, path.replace('{websiteId}', websiteId)] as const;
  };
  const body = (method: string) => (method === 'GET' || method === 'DELETE' ? undefined : { enforce: true });

  it('answers every documented bot-traffic route, and any method or path under its prefixes, 501 in the envelope', async () => {
    const { owner, website } = await ownerWithWebsite();
    for (const route of [...BOT_TRAFFIC_ROUTES, ...UNDER_THE_PREFIXES]) {
      const [method, url] = split(route, website.id);
      const response = await t.request(method, url, { token: owner.token, body: body(method), query: { websiteId: website.id, startAt: '2026-01-01' } });
      expectNotOffered(response, route, /^Bot-traffic tracking/);
    }
  });

  it('answers the social-mention routes 501 too', async () => {
    const { owner } = await ownerWithWebsite();
    for (const route of MENTIONS_ROUTES) {
      const [method, url] = split(route, UNKNOWN_ID);
      expectNotOffered(await t.request(method, url, { token: owner.token }), route, route.endsWith('/bots') ? /^Bot-traffic/ : /^Social mentions/);
    }
  });

  it('answers 401 without a credential, and with a bad one, on every route, before anything else', async () => {
    const { website } = await ownerWithWebsite();
    for (const route of [...BOT_TRAFFIC_ROUTES, ...UNDER_THE_PREFIXES, ...MENTIONS_ROUTES]) {
      const [method, url] = split(route, website.id);
      for (const token of [undefined, 'dft_not-a-real-token']) {
        const response = await t.request(method, url, { token, body: body(method) });
        expect(response.status, `${route}: ${response.raw}`).toBe(401);
        expect(response.body.status).toBe('error');
        expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
      }
    }
  });

  it("answers the website's own df_ key 501 on the website and analytics routes, and 403 on the account-wide usage", async () => {
    const { owner, website } = await ownerWithWebsite();
    const key = await createApiKey(t, owner.token, website.id);
    for (const route of BOT_TRAFFIC_ROUTES) {
      const [method, url] = split(route, website.id);
      const response = await t.request(method, url, { token: key.key, body: body(method) });
      if (route.includes('/admin/bot-traffic/')) expect(response.status, route).toBe(403);
      else expectNotOffered(response, route, /^Bot-traffic tracking/);
    }
  });

  it('checks the website and the role on the website routes as every admin route does: 404, then 403, then 501', async () => {
    const { owner, website } = await ownerWithWebsite();
    const websiteRoutes = BOT_TRAFFIC_ROUTES.filter((route) => route.includes('{websiteId}'));
    const stranger = await createAccount(t);
    const viewer = await createAccount(t);
    await addMember(t, website.id, viewer.id, 'viewer');
    const readOnly = await createToken(t, owner, ['settings:read']);
    for (const route of websiteRoutes) {
      const [method, url] = split(route, website.id);
      const [, unknown] = split(route, UNKNOWN_ID);
      expect((await t.request(method, url, { token: stranger.token, body: body(method) })).status, route).toBe(404);
      expect((await t.request(method, unknown, { token: owner.token, body: body(method) })).status, route).toBe(404);
      const asViewer = await t.request(method, url, { token: viewer.token, body: body(method) });
      const asReadOnly = await t.request(method, url, { token: readOnly, body: body(method) });
      if (method === 'GET') {
        expectNotOffered(asViewer, route, /^Bot-traffic/);
        expectNotOffered(asReadOnly, route, /^Bot-traffic/);
      } else {
        expect(asViewer.status, route).toBe(403);
        expect(asReadOnly.body.error.message, route).toMatch(/settings:write/);
      }
    }
  });

  it('catches only its own prefixes: a neighbouring path is still an unknown route', async () => {
    const { owner, website } = await ownerWithWebsite();
    for (const url of ['/api/v1/analytics/bot-traffickers', `/api/v1/admin/websites/${website.id}/bot-trafficking`, '/api/v1/admin/bot-traffic-usage']) {
      const response = await t.request('GET', url, { token: owner.token });
      expect(response.status, url).toBe(404);
      expect(response.body.error.message).toMatch(/^No route GET/);
    }
  });

  it('is left out of the OpenAPI document', async () => {
    const doc = (await t.request('GET', '/api/v1/openapi.json')).body;
    const paths = Object.keys(doc.paths);
    expect(paths.filter((path) => /bot-traffic|\/bots|mentions/.test(path))).toEqual([]);
  });
});
