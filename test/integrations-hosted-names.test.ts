import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openCredentials, sealCredentials } from '../src/modules/integrations/credentials.ts';
import { type ApiResponse, type RequestOptions, type TestApp, useTestApp } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { UNKNOWN_ID, addMember, createAccount, createApiKey, createToken, createWebsite, expectError } from './helpers/factories.ts';

// The integrations under the hosted service's names (website-api.md section 7, and the hosted
// docs: POST/DELETE /integrations/{stripe,lemonsqueezy,polar,paddle}, PATCH /integrations/paddle,
// DELETE /integrations/{shopify,woocommerce}, GET data[0].stripe.connected). Written out here so
// the tests hold the code to the spec rather than to itself.

const HOSTED: Record<string, string> = {
  'provider-one': 'stripe',
  'provider-two': 'lemonsqueezy',
  'provider-three': 'polar',
  'provider-four': 'paddle',
  'provider-five': 'shopify',
  'provider-six': 'woocommerce',
};
/** Each connectable provider's fields: Sightline's name and the hosted service's. */
const FIELDS: Record<string, [seed: string, hosted: string][]> = {
  'provider-one': [['providerOneRestrictedKey', 'stripeRak']],
  'provider-two': [
    ['providerTwoApiKey', 'lemonsqueezyApiKey'],
    ['providerTwoStoreId', 'lemonsqueezyStoreId'],
  ],
  'provider-three': [
    ['providerThreeAccessToken', 'polarAccessToken'],
    ['providerThreeOrgId', 'polarOrgId'],
  ],
  'provider-four': [['providerFourApiKey', 'paddleApiKey']],
};
const CONNECTABLE = Object.keys(FIELDS);
const NOT_CONNECTABLE = ['provider-five', 'provider-six'];

const integrationsUrl = (websiteId: string) => `/api/v1/admin/websites/${websiteId}/integrations`;
const providerUrl = (websiteId: string, name: string) => `${integrationsUrl(websiteId)}/${name}`;

async function storedIntegrations(t: TestApp, websiteId: string) {
  return t.db.selectFrom('integrations').selectAll().where('website_id', '=', websiteId).orderBy('provider').execute();
}

async function storedJobs(t: TestApp, websiteId: string) {
  return t.db.selectFrom('integration_jobs').selectAll().where('website_id', '=', websiteId).execute();
}

describeEachEngine('integrations under the hosted names', (engine) => {
  const t = useTestApp(engine);
  const secrets: string[] = [];
  const responses: ApiResponse[] = [];

  const secret = () => {
    const value = `rk_live_${randomBytes(16).toString('hex')}`;
    secrets.push(value);
    return value;
  };
  const call = async (method: string, url: string, options?: RequestOptions) => {
    const response = await t.request(method, url, options);
    responses.push(response);
    return response;
  };
  /** A body for the provider in one naming: [seed, hosted] picks the name. */
  const body = (provider: string, naming: 0 | 1) => Object.fromEntries(FIELDS[provider]!.map((pair) => [pair[naming], secret()]));
  /** What must be stored for a body: the same values under Sightline's names. */
  const asStored = (provider: string, sent: Record<string, string>) =>
    Object.fromEntries(FIELDS[provider]!.map(([seed, hosted]) => [seed, sent[seed] ?? sent[hosted]]));

  const ownerWithWebsite = async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    return { owner, website };
  };
  /** The status, each provider's webhook checked for its address under the hosted name and then left out (integration-webhooks.test.ts covers it). */
  const status = async (token: string, websiteId: string) => {
    const response = await call('GET', integrationsUrl(websiteId), { token });
    expect(response.status, response.raw).toBe(200);
    const item = response.body.data[0];
    for (const [name, value] of Object.entries<any>(item)) {
      if (name === 'currency') continue;
      const hosted = HOSTED[name] ?? name;
      expect(value.webhook.url).toBe(`http://127.0.0.1:3000/api/webhooks/${hosted}/${websiteId}`);
      delete value.webhook;
    }
    return item;
  };

  describe('GET', () => {
    it('lists every provider under both names, the same status under each, with the currency', async () => {
      const { owner, website } = await ownerWithWebsite();
      const off = { connected: false, connectedAt: null };
      // The providers with an API credential also show its check and their history import.
      const apiOff = { ...off, account: null, history: null };
      const paddleOff = { ...apiOff, resync: null, keyExpiresAt: null };
      const item = await status(owner.token, website.id);
      expect(item).toEqual({
        'provider-one': apiOff,
        'provider-two': apiOff,
        'provider-three': apiOff,
        'provider-four': paddleOff,
        'provider-five': off,
        'provider-six': off,
        stripe: apiOff,
        lemonsqueezy: apiOff,
        polar: apiOff,
        paddle: paddleOff,
        shopify: off,
        woocommerce: off,
        currency: 'USD',
      });
    });

    it("shows a connection under both names whichever path made it, and the website's own currency", async () => {
      const { owner, website } = await ownerWithWebsite();
      const changed = await call('PUT', `/api/v1/admin/websites/${website.id}`, { token: owner.token, body: { currency: 'EUR' } });
      expect(changed.status, changed.raw).toBe(200);
      const viaHosted = await call('POST', providerUrl(website.id, 'stripe'), { token: owner.token, body: body('provider-one', 1) });
      const viaSeed = await call('POST', providerUrl(website.id, 'provider-four'), { token: owner.token, body: body('provider-four', 0) });
      const item = await status(owner.token, website.id);
      // Each connection's credential is being checked by the job connecting queued (the job worker is off here).
      const verifying = { status: 'verifying', name: null, currency: null, error: null, verifiedAt: null };
      const history = (requestedAt: string) => ({ status: 'queued', requestedAt, finishedAt: null, error: null, pages: 0, paymentsImported: 0, attempts: 0 });
      const stripeAt = viaHosted.body.data[0].connectedAt;
      const paddleAt = viaSeed.body.data[0].connectedAt;
      expect(item.stripe).toEqual({ connected: true, connectedAt: stripeAt, account: verifying, history: history(stripeAt) });
      expect(item['provider-one']).toEqual(item.stripe);
      expect(item.paddle).toEqual({
        connected: true,
        connectedAt: paddleAt,
        account: verifying,
        history: history(paddleAt),
        resync: { status: 'queued', requestedAt: paddleAt, finishedAt: null, error: null },
        keyExpiresAt: null,
      });
      expect(item['provider-four']).toEqual(item.paddle);
      expect(item.lemonsqueezy.connected).toBe(false);
      expect(item.currency).toBe('EUR');
      expect(viaHosted.body.data[0].currency).toBe('EUR');
    });
  });

  describe('POST connect at the hosted paths', () => {
    it.each(CONNECTABLE)('connects %s at its hosted path with the hosted field names, stored under Sightline\'s', async (provider) => {
      const { owner, website } = await ownerWithWebsite();
      const sent = body(provider, 1);
      const response = await call('POST', providerUrl(website.id, HOSTED[provider]!), { token: owner.token, body: sent });
      expect(response.status, response.raw).toBe(200);
      expect(response.body).toEqual({
        status: 'success',
        data: [{ message: expect.stringContaining(provider), provider, connected: true, connectedAt: expect.any(String), currency: 'USD' }],
      });
      const rows = await storedIntegrations(t, website.id);
      expect(rows.map((r) => r.provider)).toEqual([provider]);
      expect(openCredentials(t.app.keyring, rows[0]!)).toEqual(asStored(provider, sent));
      expect((await status(owner.token, website.id))[HOSTED[provider]!].connected).toBe(true);
    });

    it.each(CONNECTABLE)('takes either naming at either path of %s', async (provider) => {
      const { owner, website } = await ownerWithWebsite();
      for (const [name, naming] of [[HOSTED[provider]!, 0], [provider, 1]] as const) {
        const sent = body(provider, naming);
        const response = await call('POST', providerUrl(website.id, name), { token: owner.token, body: sent });
        expect(response.status, `${name}: ${response.raw}`).toBe(200);
        const [row] = await storedIntegrations(t, website.id);
        expect(openCredentials(t.app.keyring, row!)).toEqual(asStored(provider, sent));
      }
      expect(await storedIntegrations(t, website.id)).toHaveLength(1);
    });

    it.each(NOT_CONNECTABLE)('has no connect route at the hosted path of %s (404), as at its own', async (provider) => {
      const { owner, website } = await ownerWithWebsite();
      const response = await call('POST', providerUrl(website.id, HOSTED[provider]!), { token: owner.token, body: { apiKey: secret() } });
      expectError(response, 404, new RegExp(`No route POST .*/${HOSTED[provider]}$`));
    });

    it('has no re-sync route for a hosted name other than paddle, nor a GET of one provider', async () => {
      const { owner, website } = await ownerWithWebsite();
      expectError(await call('PATCH', providerUrl(website.id, 'stripe'), { token: owner.token }), 404, /No route/);
      expectError(await call('GET', providerUrl(website.id, 'stripe'), { token: owner.token }), 404, /No route/);
    });
  });

  describe('bad bodies', () => {
    it.each(CONNECTABLE)('answers 400 for a body mixing both namings at either path of %s, naming the fields and keeping the old credentials', async (provider) => {
      const { owner, website } = await ownerWithWebsite();
      const first = body(provider, 0);
      expect((await call('POST', providerUrl(website.id, provider), { token: owner.token, body: first })).status).toBe(200);
      const before = await storedIntegrations(t, website.id);
      const [[seed, hosted]] = FIELDS[provider]! as [[string, string]];
      // The same credential twice, and (for two-field providers) one field in each naming.
      const mixes: Record<string, string>[] = [{ ...body(provider, 0), [hosted]: secret() }];
      if (FIELDS[provider]!.length > 1) {
        const [, [, otherHosted]] = FIELDS[provider]! as [[string, string], [string, string]];
        mixes.push({ [seed]: secret(), [otherHosted]: secret() });
      }
      for (const name of [provider, HOSTED[provider]!]) {
        for (const mix of mixes) {
          const response = await call('POST', providerUrl(website.id, name), { token: owner.token, body: mix });
          expectError(response, 400, /mixes Sightline's field names .* with the hosted service's/);
          expect(response.body.error.message).toContain(seed);
          expect(response.body.error.message).toMatch(new RegExp(`send either ${FIELDS[provider]!.map((p) => p[0]).join(' and ')}, or ${FIELDS[provider]!.map((p) => p[1]).join(' and ')}$`));
          for (const value of Object.values(mix)) expect(response.raw).not.toContain(value);
        }
      }
      expect(await storedIntegrations(t, website.id)).toEqual(before);
    });

    it.each(CONNECTABLE)('names the hosted field in a 400 for a bad or missing value sent in the hosted names to %s', async (provider) => {
      const { owner, website } = await ownerWithWebsite();
      for (const name of [provider, HOSTED[provider]!]) {
        for (const [, hosted] of FIELDS[provider]!) {
          const empty = await call('POST', providerUrl(website.id, name), { token: owner.token, body: { ...body(provider, 1), [hosted]: '' } });
          expectError(empty, 400);
          expect(empty.body.error.message).toBe(`body.${hosted}: must NOT have fewer than 1 characters`);
          expect(empty.body.error.details).toEqual([{ path: `body.${hosted}`, message: 'must NOT have fewer than 1 characters' }]);

          const spaced = await call('POST', providerUrl(website.id, name), { token: owner.token, body: { ...body(provider, 1), [hosted]: `${secret()} x` } });
          expect(spaced.body.error.message).toBe(`body.${hosted}: must match pattern "^\\S+$"`);

          const number = await call('POST', providerUrl(website.id, name), { token: owner.token, body: { ...body(provider, 1), [hosted]: 42 } });
          expect(number.body.error.message).toBe(`body.${hosted}: must be string`);

          if (FIELDS[provider]!.length > 1) {
            const { [hosted]: _left, ...partial } = body(provider, 1);
            const missing = await call('POST', providerUrl(website.id, name), { token: owner.token, body: partial });
            expect(missing.body.error.message).toBe(`body.${hosted}: is required`);
          }
        }
        const unknown = await call('POST', providerUrl(website.id, name), { token: owner.token, body: { ...body(provider, 1), webhookSecret: secret() } });
        expect(unknown.body.error.message).toBe('body.webhookSecret: is not an allowed field');
      }
      expect(await storedIntegrations(t, website.id)).toEqual([]);
    });

    it.each(CONNECTABLE)('tells a body without credentials the hosted field at the hosted path of %s, and Sightline\'s at its own', async (provider) => {
      const { owner, website } = await ownerWithWebsite();
      const [[seed, hosted]] = FIELDS[provider]! as [[string, string]];
      expectError(await call('POST', providerUrl(website.id, HOSTED[provider]!), { token: owner.token }), 400, new RegExp(`^body\\.${hosted}: is required$`));
      expectError(await call('POST', providerUrl(website.id, HOSTED[provider]!), { token: owner.token, body: {} }), 400, new RegExp(`^body\\.${hosted}: is required$`));
      expectError(await call('POST', providerUrl(website.id, provider), { token: owner.token, body: {} }), 400, new RegExp(`^body\\.${seed}: is required$`));
      expect(await storedIntegrations(t, website.id)).toEqual([]);
    });

    it('answers 400 for a hosted body that is not an object, and for another provider\'s hosted field', async () => {
      const { owner, website } = await ownerWithWebsite();
      expectError(await call('POST', providerUrl(website.id, 'stripe'), { token: owner.token, body: [secret()] }), 400, /^body: must be object$/);
      const foreign = await call('POST', providerUrl(website.id, 'stripe'), { token: owner.token, body: { stripeRak: secret(), paddleApiKey: secret() } });
      expectError(foreign, 400, /^body\.paddleApiKey: is not an allowed field$/);
      expect(await storedIntegrations(t, website.id)).toEqual([]);
    });
  });

  describe('DELETE and PATCH at the hosted paths', () => {
    it.each(CONNECTABLE)('disconnects %s at its hosted path, whichever path connected it', async (provider) => {
      const { owner, website } = await ownerWithWebsite();
      expect((await call('POST', providerUrl(website.id, provider), { token: owner.token, body: body(provider, 0) })).status).toBe(200);
      const first = await call('DELETE', providerUrl(website.id, HOSTED[provider]!), { token: owner.token });
      expect(first.body).toEqual({ status: 'success', data: [{ message: expect.stringContaining(provider), disconnected: true }] });
      expect(await storedIntegrations(t, website.id)).toEqual([]);
      const again = await call('DELETE', providerUrl(website.id, HOSTED[provider]!), { token: owner.token });
      expect(again.body.data).toEqual([{ message: expect.any(String), disconnected: false }]);
    });

    it.each(NOT_CONNECTABLE)('disconnects %s at its hosted path when a connection exists', async (provider) => {
      const { owner, website } = await ownerWithWebsite();
      const sealed = sealCredentials(t.app.keyring, website.id, provider, { accessToken: secret() });
      const now = new Date().toISOString();
      await t.db
        .insertInto('integrations')
        .values({ website_id: website.id, provider, key_id: sealed.keyId, ciphertext: sealed.ciphertext, connected_at: now, updated_at: now })
        .execute();
      expect((await status(owner.token, website.id))[HOSTED[provider]!]).toEqual({ connected: true, connectedAt: now });
      const response = await call('DELETE', providerUrl(website.id, HOSTED[provider]!), { token: owner.token });
      expect(response.body.data).toEqual([{ message: expect.any(String), disconnected: true }]);
      expect(await storedIntegrations(t, website.id)).toEqual([]);
    });

    it('queues a re-sync at PATCH /integrations/paddle, and refuses one while paddle is not connected', async () => {
      const { owner, website } = await ownerWithWebsite();
      expectError(await call('PATCH', providerUrl(website.id, 'paddle'), { token: owner.token }), 400, /provider-four is not connected/);
      expect((await call('POST', providerUrl(website.id, 'paddle'), { token: owner.token, body: body('provider-four', 1) })).status).toBe(200);
      const response = await call('PATCH', providerUrl(website.id, 'paddle'), { token: owner.token });
      expect(response.status, response.raw).toBe(200);
      expect(response.body.data[0].resync).toMatchObject({ status: 'queued' });
      expect((await storedJobs(t, website.id)).map((j) => [j.provider, j.status])).toEqual([['provider-four', 'queued']]);
      expect((await status(owner.token, website.id)).paddle.resync).toEqual(response.body.data[0].resync);
      const again = await call('PATCH', providerUrl(website.id, 'provider-four'), { token: owner.token });
      expect(again.body.data[0].message).toMatch(/already queued/);
    });
  });

  describe('access at the hosted paths, as at the seed paths', () => {
    const routes = (websiteId: string): [string, string, unknown?][] => [
      ['POST', providerUrl(websiteId, 'stripe'), { stripeRak: secret() }],
      ['POST', providerUrl(websiteId, 'lemonsqueezy'), { lemonsqueezyApiKey: secret(), lemonsqueezyStoreId: secret() }],
      ['POST', providerUrl(websiteId, 'polar'), { polarAccessToken: secret(), polarOrgId: secret() }],
      ['POST', providerUrl(websiteId, 'paddle'), { paddleApiKey: secret() }],
      ...Object.values(HOSTED).map((name): [string, string] => ['DELETE', providerUrl(websiteId, name)]),
      ['PATCH', providerUrl(websiteId, 'paddle')],
    ];

    async function baseline() {
      const { owner, website } = await ownerWithWebsite();
      expect((await call('POST', providerUrl(website.id, 'lemonsqueezy'), { token: owner.token, body: body('provider-two', 1) })).status).toBe(200);
      return { owner, website };
    }
    const snapshot = async (websiteId: string) => ({ integrations: await storedIntegrations(t, websiteId), jobs: await storedJobs(t, websiteId) });

    it('answers 401 without a credential on every hosted route, changing nothing', async () => {
      const { website } = await baseline();
      const before = await snapshot(website.id);
      for (const [method, url, sent] of routes(website.id)) {
        const response = await call(method, url, { body: sent });
        expectError(response, 401);
        expect(response.headers['www-authenticate'], `${method} ${url}`).toMatch(/^Bearer/);
      }
      expect(await snapshot(website.id)).toEqual(before);
    });

    it('answers 403 without settings:write (checked before the body) and for a viewer, changing nothing', async () => {
      const { owner, website } = await baseline();
      const readOnly = await createToken(t, owner, ['settings:read']);
      const viewer = await createAccount(t);
      await addMember(t, website.id, viewer.id, 'viewer');
      const before = await snapshot(website.id);
      for (const [method, url, sent] of routes(website.id)) {
        expectError(await call(method, url, { token: readOnly, body: sent }), 403, /settings:write/);
        expectError(await call(method, url, { token: viewer.token, body: sent }), 403, /role \(viewer\)/);
      }
      expectError(await call('POST', providerUrl(website.id, 'stripe'), { token: readOnly, body: { stripeRak: '', providerOneRestrictedKey: secret() } }), 403);
      expect(await snapshot(website.id)).toEqual(before);
    });

    it('answers 403 for a token limited to other websites and for a df_ key of another website', async () => {
      const { owner, website } = await baseline();
      const other = await createWebsite(t, owner.token);
      const limited = await createToken(t, owner, ['*'], [other.id]);
      const key = await createApiKey(t, owner.token, other.id);
      const before = await snapshot(website.id);
      for (const [method, url, sent] of routes(website.id)) {
        expectError(await call(method, url, { token: limited, body: sent }), 403, /not allowed to access this website/);
        expectError(await call(method, url, { token: key.key, body: sent }), 403, /another website/);
      }
      expect(await snapshot(website.id)).toEqual(before);
    });

    it('lets a df_ key of the website use every hosted route', async () => {
      const { owner, website } = await baseline();
      const key = await createApiKey(t, owner.token, website.id);
      const all = routes(website.id);
      // The PATCH last, after paddle is connected again (the DELETEs before it disconnect it).
      const sequence: [string, string, unknown?][] = [
        ...all.filter(([method]) => method !== 'PATCH'),
        ['POST', providerUrl(website.id, 'paddle'), { paddleApiKey: secret() }],
        ...all.filter(([method]) => method === 'PATCH'),
      ];
      for (const [method, url, sent] of sequence) {
        const response = await call(method, url, { token: key.key, body: sent });
        expect(response.status, `${method} ${url}: ${response.raw}`).toBe(200);
      }
      // Every disconnect cancelled its provider's job; paddle's new connection has one open job.
      const open = (await snapshot(website.id)).jobs.filter((j) => j.status !== 'failed');
      expect(open.map((j) => [j.provider, j.status])).toEqual([['provider-four', 'queued']]);
    });

    it("answers 404 for another account's website and an unknown one, even with a bad body, and 400 for a malformed id", async () => {
      const { website } = await baseline();
      const stranger = await createAccount(t);
      const before = await snapshot(website.id);
      for (const [method, url, sent] of [...routes(website.id), ['POST', providerUrl(website.id, 'stripe'), { stripeRak: '' }] as [string, string, unknown]]) {
        expectError(await call(method, url, { token: stranger.token, body: sent }), 404, /Website not found/);
      }
      for (const [method, url, sent] of routes(UNKNOWN_ID)) {
        expectError(await call(method, url, { token: stranger.token, body: sent }), 404, /Website not found/);
      }
      expectError(await call('DELETE', providerUrl('not-an-id', 'stripe'), { token: stranger.token }), 400, /path\.websiteId/);
      expect(await snapshot(website.id)).toEqual(before);
    });
  });

  // Runs last: no credential value sent in this suite came back in a response or reached the log.
  it('never returned or logged a credential value sent in this suite', async () => {
    expect(secrets.length).toBeGreaterThan(50);
    const bodies = responses.map((r) => r.raw).join('\n');
    const log = t.logLines.join('\n');
    const stored = JSON.stringify(await t.db.selectFrom('integrations').selectAll().execute());
    for (const value of secrets) {
      expect(bodies.includes(value), `a response contains ${value}`).toBe(false);
      expect(log.includes(value), `the log contains ${value}`).toBe(false);
      expect(stored.includes(value), `the integrations table contains ${value}`).toBe(false);
    }
  });
});
