import { expect, it } from 'vitest';
import { digestSecret } from '../src/auth/sessions.ts';
import { LINK_TOKEN_EXAMPLE } from '../src/modules/dashboard/dashboard.schemas.ts';
import { useTestApp } from './helpers/app.ts';
import { TEST_PASSWORD, signInAs } from './helpers/dashboard-session.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { createAccount, createApiKey, createWebsite } from './helpers/factories.ts';
import { plausibleExport, zipOf } from './helpers/plausible-export.ts';

// Swagger UI's "Try it out" fills each request from the document: the request body's media-type
// example, else a sample built from the schema (examples, defaults, enums, else "string" and 0),
// and each parameter from its example. Every operation is sent here exactly so,
// with a valid token and real ids in place of the path ids, to a real app: none may answer 400.
// The few that cannot answer 200 are named below with their reason.

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
/** Swagger UI runs in a browser: the ingestion route drops events from agents that are not one. */
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

/** Operations whose example cannot succeed whatever it holds, and what they answer instead. */
const NOT_200: Record<string, { status: number; why: string }> = {
  'DELETE /api/v1/admin/websites/{websiteId}': { status: 403, why: 'websites are deleted in the dashboard only' },
  'POST /api/v1/dashboard/setup': { status: 409, why: 'the first-run setup is done once an account exists' },
  'POST /api/v1/dashboard/sign-up': { status: 403, why: 'sign-up is closed unless SIGNUP=open' },
  'POST /api/v1/admin/websites/{websiteId}/imports': { status: 202, why: 'an upload is accepted and read by a background job' },
  'POST /api/v1/admin/websites/{websiteId}/imports/umami/websites': { status: 400, why: "the example's Umami database does not exist on this server (the 400 names the database URL)" },
  'POST /api/v1/admin/websites/{websiteId}/imports/umami': { status: 400, why: "the example's Umami database does not exist on this server (the 400 names the database URL)" },
  'POST /api/webhooks/{provider}/{websiteId}': { status: 400, why: "a delivery carries the provider's signature with the secret the examples stored; Swagger UI sends none" },
};

/** What Swagger UI puts in a field it has no example for (its JSON Schema sampler, simplified). */
function sample(schema: any): unknown {
  if (!schema || typeof schema !== 'object') return undefined;
  if ('example' in schema) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if ('default' in schema) return schema.default;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const union = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(union)) return sample(union[0]);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (type === 'object' || schema.properties) {
    return Object.fromEntries(Object.entries<any>(schema.properties ?? {}).map(([name, property]) => [name, sample(property)]));
  }
  if (type === 'array') return [sample(schema.items)];
  if (type === 'string') {
    if (schema.format === 'date-time') return new Date().toISOString();
    if (schema.format === 'email') return 'user@example.com';
    return 'string';
  }
  if (type === 'integer' || type === 'number') return 0;
  if (type === 'boolean') return true;
  return null;
}

function operationsOf(doc: any): Array<{ key: string; path: string; method: string; operation: any }> {
  return Object.entries<Record<string, any>>(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path}`, path, method, operation })),
  );
}

function bodyExample(operation: any): unknown {
  const media = operation.requestBody?.content?.['application/json'];
  if (!media) return undefined;
  if ('example' in media) return media.example;
  const named = Object.values<any>(media.examples ?? {})[0];
  if (named) return named.value;
  return sample(media.schema);
}

function parameterExample(parameter: any): unknown {
  if ('example' in parameter) return parameter.example;
  const named = Object.values<any>(parameter.examples ?? {})[0];
  if (named) return named.value;
  const schema = parameter.schema ?? {};
  if ('example' in schema) return schema.example;
  if (Array.isArray(schema.examples)) return schema.examples[0];
  return schema.default;
}

describeEachEngine('OpenAPI examples', (engine) => {
  // Mail is configured (the password-reset request needs it) to a port that refuses: it stays queued.
  const t = useTestApp(engine, { signInLimit: { perAccount: 1000, perAddress: 1000, windowMs: 60_000 }, smtpUrl: 'smtp://127.0.0.1:9' });

  it('every operation, filled from its examples as Swagger UI fills it, is accepted', async () => {
    const owner = await createAccount(t, 'Example Owner');
    // The sign-in examples name this account, and its password is the examples' password.
    await t.db.updateTable('accounts').set({ email: 'ada@example.com' }).where('id', '=', owner.id).execute();
    await signInAs(t, owner.id, TEST_PASSWORD);
    // Not example.com itself: createWebsite's example creates that one.
    const website = await createWebsite(t, owner.token, 'www.example.com');
    const apiKey = await createApiKey(t, owner.token, website.id);
    const token = await t.request('POST', '/api/v1/admin/access-tokens', { token: owner.token, body: { name: 'spare' } });
    const funnel = await t.request('POST', `/api/v1/admin/websites/${website.id}/funnels`, {
      token: owner.token,
      body: { name: 'Existing', steps: [{ type: 'pageview', url: '/' }, { type: 'pageview', url: '/pricing' }] },
    });
    const alert = await t.request('POST', `/api/v1/admin/websites/${website.id}/alerts`, {
      token: owner.token,
      body: { name: 'Existing', trigger: { goalName: 'existing' }, template: { message: 'An existing alert fired.' } },
    });
    // An invitation to the owner's e-mail, from someone else's website, for acceptInvitation.
    const inviter = await createAccount(t, 'Inviter');
    const otherSite = await createWebsite(t, inviter.token);
    const invitation = await t.request('POST', `/api/v1/admin/websites/${otherSite.id}/team`, {
      token: inviter.token,
      body: { email: 'ada@example.com' },
    });
    // Another one, whose mailed link holds the examples' link token, for getInvitationLink and acceptInvitationLink.
    const linkSite = await createWebsite(t, inviter.token);
    const linked = await t.request('POST', `/api/v1/admin/websites/${linkSite.id}/team`, { token: inviter.token, body: { email: 'ada@example.com' } });
    expect(linked.status, linked.raw).toBe(200);
    await t.db.updateTable('invitations').set({ link_digest: digestSecret(LINK_TOKEN_EXAMPLE) }).where('id', '=', linked.body.data[0].invitationId).execute();
    const note = await t.request('POST', `/api/v1/admin/websites/${website.id}/notes`, { token: owner.token, body: { text: 'An existing note' } });
    const sharedLink = await t.request('POST', `/api/v1/admin/websites/${website.id}/shared-links`, { token: owner.token, body: { name: 'Investors' } });
    const segment = await t.request('POST', `/api/v1/admin/websites/${website.id}/segments`, {
      token: owner.token,
      body: { name: 'An existing segment', filters: { filter_country: 'is:US' } },
    });
    // An import already there, for getImport and deleteImport (another day than the example's zip, which would be a 409 otherwise).
    const imported = await t.request('POST', `/api/v1/admin/websites/${website.id}/imports`, {
      token: owner.token,
      body: { zipBase64: zipOf(plausibleExport(['2020-02-01'])).toString('base64') },
    });
    expect(imported.status, imported.raw).toBe(202);
    // A visitor the website has seen, for getVisitor.
    const seen = await t.request('POST', '/api/events', {
      body: { websiteId: website.trackingId, href: 'https://www.example.com/', type: 'pageview', visitorId: 'visitor-seen', sessionId: 'session-seen' },
      headers: { 'user-agent': BROWSER },
    });
    for (const setup of [token, funnel, alert, invitation, note, sharedLink, segment, seen]) expect(setup.status, setup.raw).toBe(200);
    const ids: Record<string, string> = {
      websiteId: website.id,
      apiKeyId: apiKey.id,
      tokenId: token.body.data[0].id,
      funnelId: funnel.body.data[0].id,
      alertId: alert.body.data[0].id,
      invitationId: invitation.body.data[0].invitationId,
      noteId: note.body.data[0].id,
      sharedLinkId: sharedLink.body.data[0].id,
      segmentId: segment.body.data[0].id,
      importId: imported.body.data[0].id,
      visitorId: 'visitor-seen',
      token: LINK_TOKEN_EXAMPLE,
      // Not EUR: the website's own currency once updateWebsite's example has run.
      currency: 'JPY',
      provider: 'stripe',
    };

    const doc = (await t.request('GET', '/api/v1/openapi.json')).body;
    // In the document's order, as a reader tries them, but deletions last: what the examples
    // create (a connection, an invitation) is there for the examples that use it.
    const operations = operationsOf(doc).sort((a, b) => Number(a.method === 'delete') - Number(b.method === 'delete'));
    const wrong: string[] = [];
    for (const { key, path, method, operation } of operations) {
      const body = bodyExample(operation) as Record<string, unknown> | undefined;
      // The ingestion body names its website by trackingId, as the tracking script does.
      if (path === '/api/events') body!.websiteId = website.trackingId;
      const query: Record<string, string> = {};
      for (const parameter of (operation.parameters ?? []).filter((p: any) => p.in === 'query')) {
        const value = ids[parameter.name] ?? parameterExample(parameter);
        if (value !== undefined) query[parameter.name] = String(value);
        else if (parameter.required) wrong.push(`${key}: required query parameter ${parameter.name} has no example`);
      }
      // Signing out everywhere ends every session: the one to end is opened just before.
      if (path.includes('{sessionId}')) ids.sessionId = (await signInAs(t, owner.id, TEST_PASSWORD)).sessionId;
      // The reset link the confirmation's example names, made just before: the request example
      // (createPasswordReset, for the same account) replaces the account's earlier links, once its
      // background write has ended.
      if (key === 'POST /api/v1/dashboard/password-reset/confirm') {
        await t.app.background.drain(); // the request writes its link after answering
        const at = Date.now();
        await t.db
          .insertInto('password_resets')
          .values({
            id: 'e0e0e0e0e0e0e0e0e0e0e0e0',
            account_id: owner.id,
            digest: digestSecret(LINK_TOKEN_EXAMPLE),
            created_at: new Date(at).toISOString(),
            expires_at: new Date(at + 3600_000).toISOString(),
            used_at: null,
          })
          .execute();
      }
      const url = path.replace(/\{(\w+)\}/g, (_match, name: string) => ids[name]!);
      // Swagger UI sends no credential where the operation declares none, and the browser's
      // session cookie (with the page's CSRF token) where only a dashboard session will do.
      const security = JSON.stringify(operation.security);
      const credential = security === '[]' || security === '[{"session":[]}]' ? undefined : owner.token;
      const session = security === '[{"session":[]}]' ? (await signInAs(t, owner.id, TEST_PASSWORD)).headers : {};
      const response = await t.request(method, url, { token: credential, body, query, headers: { 'user-agent': BROWSER, ...session } });
      const expected = NOT_200[key]?.status ?? 200;
      if (response.status !== expected) wrong.push(`${key} ${JSON.stringify(body)}: ${response.status} ${response.raw}`);
    }
    expect(wrong).toEqual([]);
    expect(operations.length).toBeGreaterThan(45);
  });
});
