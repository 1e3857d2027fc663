import { describe, expect, it } from 'vitest';
import { useTestApp } from './helpers/app.ts';
import { UNKNOWN_ID, createAccount, createApiKey, createWebsite } from './helpers/factories.ts';

// The administration routes, read from the generated OpenAPI document (Fastify 5 has no route
// list API, and the document is what clients are built from). Every route of admin-api.md
// section 4 is here, table by table, and nothing else is: a route added, lost or renamed shows up
// as a difference in this list. Paths are relative to /api/v1/admin, as in the spec.

const INVENTORY: Record<string, string[]> = {
  Account: ['GET /account', 'PUT /account'],
  'Account tokens': ['GET /access-tokens', 'POST /access-tokens', 'DELETE /access-tokens/{tokenId}'],
  Websites: [
    'GET /websites',
    'POST /websites',
    'GET /websites/{websiteId}',
    'PUT /websites/{websiteId}',
    'DELETE /websites/{websiteId}',
    // Not in admin-api.md: whether the derived data is being rebuilt after a change of time zone (issue 33).
    'GET /websites/{websiteId}/derived-data',
  ],
  'Website API keys': [
    'GET /websites/{websiteId}/apikeys',
    'POST /websites/{websiteId}/apikeys',
    'PUT /websites/{websiteId}/apikeys/{apiKeyId}',
    'DELETE /websites/{websiteId}/apikeys/{apiKeyId}',
  ],
  Goals: [
    'GET /websites/{websiteId}/goals',
    'GET /websites/{websiteId}/goals/customizations',
    'PATCH /websites/{websiteId}/goals/customizations',
    'DELETE /websites/{websiteId}/goals/customizations',
  ],
  Funnels: [
    'GET /websites/{websiteId}/funnels',
    'POST /websites/{websiteId}/funnels',
    'PUT /websites/{websiteId}/funnels/{funnelId}',
    'DELETE /websites/{websiteId}/funnels/{funnelId}',
  ],
  Alerts: [
    'GET /websites/{websiteId}/alerts',
    'POST /websites/{websiteId}/alerts',
    'PUT /websites/{websiteId}/alerts/{alertId}',
    'DELETE /websites/{websiteId}/alerts/{alertId}',
    'GET /websites/{websiteId}/alerts/history',
  ],
  Team: ['GET /websites/{websiteId}/team', 'POST /websites/{websiteId}/team', 'DELETE /websites/{websiteId}/team'],
  // Not in admin-api.md: how an invited account accepts (contract.md section 4).
  Invitations: ['GET /invitations', 'POST /invitations/{invitationId}/accept'],
  // website-api.md section 4.
  Notes: [
    'GET /websites/{websiteId}/notes',
    'POST /websites/{websiteId}/notes',
    'PUT /websites/{websiteId}/notes/{noteId}',
    'DELETE /websites/{websiteId}/notes/{noteId}',
  ],
  // Not in admin-api.md (issue 37 item 5): saved filter sets, personal or shared with the team.
  Segments: [
    'GET /websites/{websiteId}/segments',
    'POST /websites/{websiteId}/segments',
    'PUT /websites/{websiteId}/segments/{segmentId}',
    'DELETE /websites/{websiteId}/segments/{segmentId}',
  ],
  Integrations: [
    'GET /websites/{websiteId}/integrations',
    'POST /websites/{websiteId}/integrations/provider-one',
    'DELETE /websites/{websiteId}/integrations/provider-one',
    'POST /websites/{websiteId}/integrations/provider-two',
    'DELETE /websites/{websiteId}/integrations/provider-two',
    'POST /websites/{websiteId}/integrations/provider-three',
    'DELETE /websites/{websiteId}/integrations/provider-three',
    'POST /websites/{websiteId}/integrations/provider-four',
    'PATCH /websites/{websiteId}/integrations/provider-four',
    'DELETE /websites/{websiteId}/integrations/provider-four',
    'DELETE /websites/{websiteId}/integrations/provider-five',
    'DELETE /websites/{websiteId}/integrations/provider-six',
    // Not in admin-api.md (issue 34): each provider's webhook signing secret (how providers five
    // and six connect), and a re-sync of the payment history for every API provider.
    ...['one', 'two', 'three', 'four', 'five', 'six'].map((n) => `PUT /websites/{websiteId}/integrations/provider-${n}/webhook`),
    ...['one', 'two', 'three', 'four'].map((n) => `POST /websites/{websiteId}/integrations/provider-${n}/resync`),
  ],
  // Not in admin-api.md (issue 37 item 3): a website's public, read-only dashboard links.
  'Shared dashboards': [
    'GET /websites/{websiteId}/shared-links',
    'POST /websites/{websiteId}/shared-links',
    'PUT /websites/{websiteId}/shared-links/{sharedLinkId}',
    'DELETE /websites/{websiteId}/shared-links/{sharedLinkId}',
  ],
  // Not in admin-api.md (issue 35 item 3): the owner's exchange rates into the website's currency.
  'Currency rates': ['GET /websites/{websiteId}/currency-rates', 'PUT /websites/{websiteId}/currency-rates/{currency}', 'DELETE /websites/{websiteId}/currency-rates/{currency}'],
  // Not in admin-api.md (issue 37 item 4): each member's own reports by mail on a website.
  'Reports by mail': ['GET /websites/{websiteId}/mail-reports', 'PUT /websites/{websiteId}/mail-reports'],
  // Not in admin-api.md (issue 37 item 1): imports of Plausible's CSV export and of an Umami database.
  Imports: [
    'GET /websites/{websiteId}/imports',
    'POST /websites/{websiteId}/imports',
    'POST /websites/{websiteId}/imports/umami/websites',
    'POST /websites/{websiteId}/imports/umami',
    'GET /websites/{websiteId}/imports/{importId}',
    'DELETE /websites/{websiteId}/imports/{importId}',
  ],
};

// Routes under /api/v1/admin that the document leaves out on purpose: the integrations under the
// hosted service's names, aliases of the documented ones (website-api.md section 7), and the
// hosted service's bot-traffic routes, which answer 501 (sections 6 and 7) for every method.
const HOSTED_NAME_ALIASES = [
  ...['stripe', 'lemonsqueezy', 'polar', 'paddle'].map((name) => `POST /websites/{websiteId}/integrations/${name}`),
  ...['stripe', 'lemonsqueezy', 'polar', 'paddle', 'shopify', 'woocommerce'].map((name) => `DELETE /websites/{websiteId}/integrations/${name}`),
  'PATCH /websites/{websiteId}/integrations/paddle',
  ...['stripe', 'lemonsqueezy', 'polar', 'paddle', 'shopify', 'woocommerce'].map((name) => `PUT /websites/{websiteId}/integrations/${name}/webhook`),
  ...['stripe', 'lemonsqueezy', 'polar', 'paddle'].map((name) => `POST /websites/{websiteId}/integrations/${name}/resync`),
];
const ALL_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const NOT_OFFERED = ['/websites/{websiteId}/bot-traffic', '/bot-traffic'].flatMap((path) =>
  ALL_METHODS.flatMap((method) => [`${method} ${path}`, `${method} ${path}/*`]),
);
const UNDOCUMENTED = [...HOSTED_NAME_ALIASES, ...NOT_OFFERED];

const PREFIX = '/api/v1/admin';
const EXPECTED = Object.values(INVENTORY).flat().sort();
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const RESPONSES_EVERY_ROUTE_DOCUMENTS = ['200', '400', '401', '403', '404', '429'];
/** Routes that accept work for the background and answer 202 with the envelope instead of 200. */
const ACCEPTED_ROUTES = ['POST /websites/{websiteId}/imports', 'POST /websites/{websiteId}/imports/umami'];

/** "METHOD /path" for every operation under /api/v1/admin in the OpenAPI document. */
function documentedRoutes(doc: any): Array<{ route: string; operation: any }> {
  return Object.entries<Record<string, any>>(doc.paths)
    .filter(([path]) => path.startsWith(`${PREFIX}/`))
    .flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => METHODS.includes(method))
        .map(([method, operation]) => ({ route: `${method.toUpperCase()} ${path.slice(PREFIX.length)}`, operation })),
    );
}

/**
 * "METHOD /path" for every route the router holds under /api/v1/admin, parsed from
 * printRoutes(): each line is a tree branch of 4 characters per level, a path segment that
 * continues its parent's, and the methods in parentheses.
 */
function routerRoutes(tree: string): string[] {
  const routes: string[] = [];
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^((?:[│ ] {3})*)[├└]── (.+?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    stack.length = depth;
    stack.push(match[2]!);
    const path = stack.join('');
    if (!path.startsWith(`${PREFIX}/`) || !match[3]) continue;
    // A wildcard prints as a child "*" of the path before its slash.
    const openapiPath = path.slice(PREFIX.length).replace(/:(\w+)/g, '{$1}').replace(/([^/])\*$/, '$1/*');
    for (const method of match[3].split(', ')) if (method !== 'HEAD') routes.push(`${method} ${openapiPath}`);
  }
  return routes;
}

describe('route inventory', () => {
  const t = useTestApp('sqlite');

  async function openapi() {
    const response = await t.request('GET', '/api/v1/openapi.json');
    expect(response.status, response.raw).toBe(200);
    return response.body;
  }

  it('serves an OpenAPI 3.1 document without a credential', async () => {
    const doc = await openapi();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('documents exactly the routes of the inventory under /api/v1/admin', async () => {
    const documented = documentedRoutes(await openapi()).map(({ route }) => route);
    expect(documented.sort()).toEqual(EXPECTED);
  });

  it('tags each admin operation with its table of the inventory, so the docs group them the same way', async () => {
    const groupOf = new Map(Object.entries(INVENTORY).flatMap(([group, routes]) => routes.map((route) => [route, group] as const)));
    const wrong = documentedRoutes(await openapi())
      .filter(({ route, operation }) => JSON.stringify(operation.tags) !== JSON.stringify([groupOf.get(route)]))
      .map(({ route, operation }) => `${route}: ${JSON.stringify(operation.tags)}`);
    expect(wrong).toEqual([]);
  });

  it('holds no admin route that the document leaves out, but the hosted-name aliases and the 501 routes', async () => {
    const documented = documentedRoutes(await openapi()).map(({ route }) => route);
    const routed = routerRoutes(t.app.printRoutes({ commonPrefix: false }));
    expect(routed.length).toBeGreaterThan(0);
    expect(routed.sort()).toEqual([...documented, ...UNDOCUMENTED].sort());
  });

  it('documents 200, 400, 401, 403, 404 and 429 for every method of every admin path', async () => {
    const missing: string[] = [];
    for (const { route, operation } of documentedRoutes(await openapi())) {
      for (const status of RESPONSES_EVERY_ROUTE_DOCUMENTS) {
        // An upload whose work runs in the background answers 202 (accepted) in place of 200.
        const answered = status === '200' && ACCEPTED_ROUTES.includes(route) ? '202' : status;
        const schema = operation.responses?.[answered]?.content?.['application/json']?.schema;
        if (!schema) missing.push(`${route} ${status}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('documents the success envelope for 200 and the error envelope for every 4xx', async () => {
    const wrong: string[] = [];
    for (const { route, operation } of documentedRoutes(await openapi())) {
      for (const [status, response] of Object.entries<any>(operation.responses ?? {})) {
        const schema = response.content?.['application/json']?.schema;
        if (!schema) continue;
        if (status === '200' || status === '202') {
          const envelope = schema.required?.includes('status') && schema.required?.includes('data');
          if (!envelope || schema.properties?.data?.type !== 'array') wrong.push(`${route} ${status}: not {status, data: [...]}`);
        } else if (status.startsWith('4')) {
          const required = schema.properties?.error?.required ?? [];
          if (!schema.required?.includes('error') || !required.includes('code') || !required.includes('message')) {
            wrong.push(`${route} ${status}: not {status, error: {code, message}}`);
          }
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('serves the documentation page at GET /docs as HTML', async () => {
    const response = await t.request('GET', '/docs');
    expect(response.status).toBe(200);
    expect(String(response.headers['content-type'])).toMatch(/^text\/html/);
    expect(response.raw).toMatch(/<html/i);
  });

  it('answers 401 with WWW-Authenticate on every route of the inventory without a credential, and changes nothing', async () => {
    const owner = await createAccount(t, 'Inventory Owner');
    const website = await createWebsite(t, owner.token);
    const apiKey = await createApiKey(t, owner.token, website.id);
    const created = await t.request('POST', '/api/v1/admin/access-tokens', { token: owner.token, body: { name: 'spare' } });
    expect(created.status, created.raw).toBe(200);
    const ids: Record<string, string> = {
      websiteId: website.id,
      apiKeyId: apiKey.id,
      tokenId: created.body.data[0].id,
      funnelId: UNKNOWN_ID,
      alertId: UNKNOWN_ID,
      invitationId: UNKNOWN_ID,
    };

    const wrong: string[] = [];
    for (const route of EXPECTED) {
      const [method, path] = route.split(' ') as [string, string];
      const url = PREFIX + path.replace(/\{(\w+)\}/g, (_match, name: string) => ids[name] ?? UNKNOWN_ID);
      // A body every write route could accept, so only the missing credential can refuse it.
      const body = method === 'GET' ? undefined : { name: 'Intruder' };
      const response = await t.request(method, url, { body });
      const envelope = response.body?.status === 'error' && response.body.error?.code === 401;
      const challenge = String(response.headers['www-authenticate']).startsWith('Bearer');
      if (response.status !== 401 || !envelope || !challenge) wrong.push(`${route}: ${response.status} ${response.raw}`);
    }
    expect(wrong).toEqual([]);

    const account = await t.request('GET', '/api/v1/admin/account', { token: owner.token });
    expect(account.body.data[0].name).toBe('Inventory Owner');
    const site = await t.request('GET', `/api/v1/admin/websites/${website.id}`, { token: owner.token });
    expect(site.status).toBe(200);
    expect(site.body.data[0].name).toBe('Test site');
    const keys = await t.request('GET', `/api/v1/admin/websites/${website.id}/apikeys`, { token: owner.token });
    expect(keys.body.data.map((key: { id: string }) => key.id)).toEqual([apiKey.id]);
    const tokens = await t.request('GET', '/api/v1/admin/access-tokens', { token: owner.token });
    expect(tokens.body.data.map((token: { id: string }) => token.id)).toContain(ids.tokenId);
    expect(tokens.body.data).toHaveLength(2);
  });
});
