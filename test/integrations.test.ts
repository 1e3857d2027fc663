import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openCredentials, sealCredentials } from '../src/modules/integrations/credentials.ts';
import { claimNextJob, finishJob } from '../src/modules/integrations/integrations.repository.ts';
import { type ApiResponse, type RequestOptions, type TestApp, useTestApp } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import {
  UNKNOWN_ID,
  addMember,
  createAccount,
  createApiKey,
  createToken,
  createWebsite,
  expectError,
} from './helpers/factories.ts';

// The providers and credential fields of admin-api.md (section 2 and the Integrations table),
// written out here so the tests hold the code to the spec rather than to itself.
const PROVIDERS = ['provider-one', 'provider-two', 'provider-three', 'provider-four', 'provider-five', 'provider-six'];
const CONNECT_FIELDS: Record<string, string[]> = {
  'provider-one': ['providerOneRestrictedKey'],
  'provider-two': ['providerTwoApiKey', 'providerTwoStoreId'],
  'provider-three': ['providerThreeAccessToken', 'providerThreeOrgId'],
  'provider-four': ['providerFourApiKey'],
};
const CONNECTABLE = Object.keys(CONNECT_FIELDS);
const NOT_CONNECTABLE = ['provider-five', 'provider-six'];
/** For each provider, a credential field that belongs to another provider. */
const FOREIGN_FIELD: Record<string, string> = {
  'provider-one': 'providerTwoApiKey',
  'provider-two': 'providerOneRestrictedKey',
  'provider-three': 'providerFourApiKey',
  'provider-four': 'providerThreeOrgId',
};

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const integrationsUrl = (websiteId: string) => `/api/v1/admin/websites/${websiteId}/integrations`;
const providerUrl = (websiteId: string, provider: string) => `${integrationsUrl(websiteId)}/${provider}`;

/** The status GET answers when nothing is connected. */
const NOTHING_CONNECTED = {
  'provider-one': { connected: false, connectedAt: null, account: null, history: null },
  'provider-two': { connected: false, connectedAt: null, account: null, history: null },
  'provider-three': { connected: false, connectedAt: null, account: null, history: null },
  'provider-four': { connected: false, connectedAt: null, account: null, history: null, resync: null, keyExpiresAt: null },
  'provider-five': { connected: false, connectedAt: null },
  'provider-six': { connected: false, connectedAt: null },
};

/** A connected API provider's credential, before the job (off in these suites) has checked it. */
const VERIFYING = { status: 'verifying', name: null, currency: null, error: null, verifiedAt: null };
/** The job that connecting queues: the check of the credential and the payment history import. */
const queuedHistory = (requestedAt: string) => ({ status: 'queued', requestedAt, finishedAt: null, error: null, pages: 0, paymentsImported: 0, attempts: 0 });

/** The hosted service's name of each provider (website-api.md section 7): GET lists each status under both. */
const HOSTED_NAMES: Record<string, string> = {
  'provider-one': 'stripe',
  'provider-two': 'lemonsqueezy',
  'provider-three': 'polar',
  'provider-four': 'paddle',
  'provider-five': 'shopify',
  'provider-six': 'woocommerce',
};

/** The whole GET item for a status in Sightline's names: the same under the hosted names, and the currency. */
/** A provider's webhook before any secret or event (integration-webhooks.test.ts covers the rest). */
const noWebhook = (provider: string) => ({
  url: expect.stringMatching(new RegExp(`/api/webhooks/${HOSTED_NAMES[provider]}/[0-9a-f]{24}$`)),
  secretSet: false,
  secretSetAt: null,
  lastEventAt: null,
  lastEventType: null,
  eventsReceived: 0,
});

function fullStatus(seed: Record<string, unknown>, currency = 'USD') {
  const withWebhooks = Object.fromEntries(PROVIDERS.map((p) => [p, { webhook: noWebhook(p), ...(seed[p] as object) }]));
  return { ...withWebhooks, ...Object.fromEntries(PROVIDERS.map((p) => [HOSTED_NAMES[p], withWebhooks[p]])), currency };
}

async function storedIntegrations(t: TestApp, websiteId: string) {
  return t.db.selectFrom('integrations').selectAll().where('website_id', '=', websiteId).orderBy('provider').execute();
}

/** provider-four's jobs, the ones PATCH re-syncs (connecting any API provider queues its own job too). */
async function storedJobs(t: TestApp, websiteId: string) {
  return t.db
    .selectFrom('integration_jobs')
    .selectAll()
    .where('website_id', '=', websiteId)
    .where('provider', '=', 'provider-four')
    .orderBy('requested_at')
    .orderBy('id')
    .execute();
}

/**
 * The suite's HTTP helpers. Every response goes through `call` and every credential value comes
 * from `secret`, so the last test can check that no credential ever left the server.
 */
function integrationsHarness(t: TestApp) {
  const secrets: string[] = [];
  const responses: ApiResponse[] = [];

  const secret = (length?: number) => {
    let value = `sk_live_${randomBytes(16).toString('hex')}`;
    if (length !== undefined) value = `${value}${'x'.repeat(Math.max(0, length - value.length))}`;
    secrets.push(value);
    return value;
  };

  const call = async (method: string, url: string, options?: RequestOptions) => {
    const response = await t.request(method, url, options);
    responses.push(response);
    return response;
  };

  const credentialsFor = (provider: string): Record<string, string> =>
    Object.fromEntries(CONNECT_FIELDS[provider]!.map((field) => [field, secret()]));

  const connect = async (token: string, websiteId: string, provider: string, body = credentialsFor(provider)) => {
    const response = await call('POST', providerUrl(websiteId, provider), { token, body });
    expect(response.status, response.raw).toBe(200);
    return { body, item: response.body.data[0] as { connectedAt: string } };
  };

  const status = async (token: string, websiteId: string) => {
    const response = await call('GET', integrationsUrl(websiteId), { token });
    expect(response.status, response.raw).toBe(200);
    expect(response.body.data).toHaveLength(1);
    const item = response.body.data[0];
    // Every status read checks that the hosted names mirror Sightline's; the tests read the latter.
    const seed = Object.fromEntries(PROVIDERS.map((p) => [p, item[p]]));
    expect(item).toEqual(fullStatus(seed, item.currency));
    // No webhook is set up in this suite (integration-webhooks.test.ts): each is checked, then left out.
    return Object.fromEntries(
      PROVIDERS.map((p) => {
        const { webhook, ...rest } = item[p];
        expect(webhook).toEqual(noWebhook(p));
        return [p, rest];
      }),
    );
  };

  const ownerWithWebsite = async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    return { owner, website };
  };

  return { secrets, responses, secret, call, credentialsFor, connect, status, ownerWithWebsite };
}

describeEachEngine('integrations', (engine) => {
  const t = useTestApp(engine);
  const { secrets, responses, secret, call, credentialsFor, connect, status, ownerWithWebsite } = integrationsHarness(t);

  describe('GET status', () => {
    it('lists all six providers, none connected, in the exact shape', async () => {
      const { owner, website } = await ownerWithWebsite();
      const response = await call('GET', integrationsUrl(website.id), { token: owner.token });
      expect(response.status, response.raw).toBe(200);
      expect(response.body).toEqual({ status: 'success', data: [fullStatus(NOTHING_CONNECTED)] });
      expect(Object.keys(response.body.data[0])).toEqual([...PROVIDERS, ...PROVIDERS.map((p) => HOSTED_NAMES[p]), 'currency']);
    });

    it('shows connected providers with their connectedAt, and nothing of the credentials', async () => {
      const { owner, website } = await ownerWithWebsite();
      const one = await connect(owner.token, website.id, 'provider-one');
      const four = await connect(owner.token, website.id, 'provider-four');
      const response = await call('GET', integrationsUrl(website.id), { token: owner.token });
      expect(response.body).toEqual({
        status: 'success',
        data: [
          fullStatus({
            ...NOTHING_CONNECTED,
            'provider-one': { connected: true, connectedAt: one.item.connectedAt, account: VERIFYING, history: queuedHistory(one.item.connectedAt) },
            'provider-four': {
              connected: true,
              connectedAt: four.item.connectedAt,
              account: VERIFYING,
              history: queuedHistory(four.item.connectedAt),
              resync: { status: 'queued', requestedAt: four.item.connectedAt, finishedAt: null, error: null },
              keyExpiresAt: null,
            },
          }),
        ],
      });
      for (const value of [...Object.values(one.body), ...Object.values(four.body)]) expect(response.raw).not.toContain(value);
    });

    it('shows only the website asked for', async () => {
      const { owner, website } = await ownerWithWebsite();
      const other = await createWebsite(t, owner.token);
      await connect(owner.token, other.id, 'provider-two');
      expect(await status(owner.token, website.id)).toEqual(NOTHING_CONNECTED);
      expect((await status(owner.token, other.id))['provider-two'].connected).toBe(true);
    });
  });

  describe('POST connect', () => {
    it.each(CONNECTABLE)('connects %s with its fields and stores them sealed', async (provider) => {
      const { owner, website } = await ownerWithWebsite();
      const before = Date.now();
      const body = credentialsFor(provider);
      const response = await call('POST', providerUrl(website.id, provider), { token: owner.token, body });
      expect(response.status, response.raw).toBe(200);
      expect(response.body).toEqual({
        status: 'success',
        data: [{ message: expect.stringContaining(provider), provider, connected: true, connectedAt: expect.stringMatching(ISO_MS), currency: 'USD' }],
      });
      const { connectedAt } = response.body.data[0];
      expect(Date.parse(connectedAt)).toBeGreaterThanOrEqual(before - 5);
      for (const value of Object.values(body)) expect(response.raw).not.toContain(value);

      const rows = await storedIntegrations(t, website.id);
      expect(rows).toHaveLength(1);
      const [row] = rows;
      expect(row).toMatchObject({ website_id: website.id, provider, key_id: t.app.keyring.currentId, connected_at: connectedAt });
      for (const value of [...Object.keys(body), ...Object.values(body)]) expect(JSON.stringify(row)).not.toContain(value);
      expect(openCredentials(t.app.keyring, row!)).toEqual(body);

      const after = await status(owner.token, website.id);
      expect(after[provider]).toMatchObject({ connected: true, connectedAt });
    });

    it.each(CONNECTABLE)('connecting %s again replaces the credentials in the same row', async (provider) => {
      const { owner, website } = await ownerWithWebsite();
      const first = await connect(owner.token, website.id, provider);
      const [firstRow] = await storedIntegrations(t, website.id);
      const second = await connect(owner.token, website.id, provider);
      const rows = await storedIntegrations(t, website.id);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.ciphertext).not.toBe(firstRow!.ciphertext);
      expect(openCredentials(t.app.keyring, rows[0]!)).toEqual(second.body);
      expect(openCredentials(t.app.keyring, rows[0]!)).not.toEqual(first.body);
      expect(rows[0]!.connected_at).toBe(second.item.connectedAt);
      expect(second.item.connectedAt >= first.item.connectedAt).toBe(true);
    });

    it('re-seals even when the same values are sent again', async () => {
      const { owner, website } = await ownerWithWebsite();
      const first = await connect(owner.token, website.id, 'provider-one');
      const [before] = await storedIntegrations(t, website.id);
      await connect(owner.token, website.id, 'provider-one', first.body);
      const [after] = await storedIntegrations(t, website.id);
      expect(after!.ciphertext).not.toBe(before!.ciphertext);
      expect(openCredentials(t.app.keyring, after!)).toEqual(first.body);
    });

    it('connects each provider independently of the others', async () => {
      const { owner, website } = await ownerWithWebsite();
      for (const provider of CONNECTABLE) await connect(owner.token, website.id, provider);
      const rows = await storedIntegrations(t, website.id);
      expect(rows.map((r) => r.provider)).toEqual([...CONNECTABLE].sort());
      const current = await status(owner.token, website.id);
      for (const provider of PROVIDERS) expect(current[provider].connected).toBe(CONNECTABLE.includes(provider));
    });

    it('accepts a credential of exactly 512 characters', async () => {
      const { owner, website } = await ownerWithWebsite();
      const body = { providerOneRestrictedKey: secret(512) };
      expect(body.providerOneRestrictedKey).toHaveLength(512);
      await connect(owner.token, website.id, 'provider-one', body);
      expect(openCredentials(t.app.keyring, (await storedIntegrations(t, website.id))[0]!)).toEqual(body);
    });

    it.each(NOT_CONNECTABLE)('has no connect route for %s (404)', async (provider) => {
      const { owner, website } = await ownerWithWebsite();
      const response = await call('POST', providerUrl(website.id, provider), { token: owner.token, body: { apiKey: secret() } });
      expectError(response, 404, new RegExp(`No route POST .*/${provider}$`));
      expect(await storedIntegrations(t, website.id)).toEqual([]);
    });

    it('has no route for a provider that does not exist, nor a PATCH for other providers', async () => {
      const { owner, website } = await ownerWithWebsite();
      expectError(await call('POST', providerUrl(website.id, 'provider-seven'), { token: owner.token, body: {} }), 404, /No route/);
      expectError(await call('DELETE', providerUrl(website.id, 'provider-seven'), { token: owner.token }), 404, /No route/);
      expectError(await call('PATCH', providerUrl(website.id, 'provider-one'), { token: owner.token }), 404, /No route/);
      expectError(await call('GET', providerUrl(website.id, 'provider-one'), { token: owner.token }), 404, /No route/);
    });
  });

  describe('bad credentials', () => {
    // Each bad value, for every field of every provider: 400 naming the field, no echo of the
    // value, and the stored credentials untouched.
    const BAD_VALUES: { label: string; value: () => unknown; message: string }[] = [
      { label: 'an empty string', value: () => '', message: 'must NOT have fewer than 1 characters' },
      { label: 'a string with a space inside', value: () => `${secret()} ${secret()}`, message: 'must match pattern "^\\S+$"' },
      { label: 'a string with a leading space', value: () => ` ${secret()}`, message: 'must match pattern "^\\S+$"' },
      { label: 'a string with a trailing newline', value: () => `${secret()}\n`, message: 'must match pattern "^\\S+$"' },
      { label: 'a string with a tab inside', value: () => `${secret()}\t${secret()}`, message: 'must match pattern "^\\S+$"' },
      { label: 'white space only', value: () => '   ', message: 'must match pattern "^\\S+$"' },
      { label: 'a string of 513 characters', value: () => secret(513), message: 'must NOT have more than 512 characters' },
      { label: 'a number', value: () => 4242424242424242, message: 'must be string' },
      { label: 'a boolean', value: () => true, message: 'must be string' },
      { label: 'null', value: () => null, message: 'must be string' },
      { label: 'an array holding the credential', value: () => [secret()], message: 'must be string' },
      { label: 'an object holding the credential', value: () => ({ key: secret() }), message: 'must be string' },
    ];

    it.each(BAD_VALUES)('answers 400 for $label, naming the field, for every field of every provider', async ({ value, message }) => {
      const { owner, website } = await ownerWithWebsite();
      for (const provider of CONNECTABLE) await connect(owner.token, website.id, provider);
      const before = await storedIntegrations(t, website.id);
      for (const provider of CONNECTABLE) {
        for (const field of CONNECT_FIELDS[provider]!) {
          const body: Record<string, unknown> = { ...credentialsFor(provider), [field]: value() };
          const response = await call('POST', providerUrl(website.id, provider), { token: owner.token, body });
          expectError(response, 400);
          expect(response.body.error.message, `${provider} ${field}`).toBe(`body.${field}: ${message}`);
          expect(response.body.error.details).toEqual([{ path: `body.${field}`, message }]);
          for (const sent of Object.values(body)) {
            if (typeof sent === 'string' && sent.trim() !== '') expect(response.raw).not.toContain(sent.trim());
          }
        }
      }
      expect(await storedIntegrations(t, website.id)).toEqual(before);
    });

    it.each(CONNECTABLE)('answers 400 naming each missing field of %s and connects nothing', async (provider) => {
      const { owner, website } = await ownerWithWebsite();
      for (const field of CONNECT_FIELDS[provider]!) {
        const { [field]: _missing, ...body } = credentialsFor(provider);
        const response = await call('POST', providerUrl(website.id, provider), { token: owner.token, body });
        expectError(response, 400);
        expect(response.body.error.message).toBe(`body.${field}: is required`);
        expect(response.body.error.details).toEqual([{ path: `body.${field}`, message: 'is required' }]);
      }
      expect(await storedIntegrations(t, website.id)).toEqual([]);
      expect((await status(owner.token, website.id))[provider].connected).toBe(false);
    });

    it.each(CONNECTABLE)('answers 400 for %s without a body, naming its first field', async (provider) => {
      const { owner, website } = await ownerWithWebsite();
      const response = await call('POST', providerUrl(website.id, provider), { token: owner.token });
      expectError(response, 400);
      expect(response.body.error.message).toBe(`body.${CONNECT_FIELDS[provider]![0]}: is required`);
      expect(await storedIntegrations(t, website.id)).toEqual([]);
    });

    it.each(CONNECTABLE)('answers 400 for a field of another provider sent to %s, keeping the old credentials', async (provider) => {
      const { owner, website } = await ownerWithWebsite();
      await connect(owner.token, website.id, provider);
      const before = await storedIntegrations(t, website.id);
      const foreign = FOREIGN_FIELD[provider]!;
      const intruder = secret();
      const response = await call('POST', providerUrl(website.id, provider), {
        token: owner.token,
        body: { ...credentialsFor(provider), [foreign]: intruder },
      });
      expectError(response, 400);
      expect(response.body.error.message).toBe(`body.${foreign}: is not an allowed field`);
      expect(response.raw).not.toContain(intruder);
      expect(await storedIntegrations(t, website.id)).toEqual(before);
    });

    it('answers 400 for an unknown field whose value is a credential, without echoing it', async () => {
      const { owner, website } = await ownerWithWebsite();
      const hidden = secret();
      const response = await call('POST', providerUrl(website.id, 'provider-four'), {
        token: owner.token,
        body: { ...credentialsFor('provider-four'), webhookSecret: hidden },
      });
      expectError(response, 400);
      expect(response.body.error.message).toBe('body.webhookSecret: is not an allowed field');
      expect(await storedIntegrations(t, website.id)).toEqual([]);
    });

    it('answers 400 for a body that is not an object', async () => {
      const { owner, website } = await ownerWithWebsite();
      const value = secret();
      const response = await call('POST', providerUrl(website.id, 'provider-one'), { token: owner.token, body: [value] });
      expectError(response, 400, /^body: must be object$/);
      expectError(await call('POST', providerUrl(website.id, 'provider-one'), { token: owner.token, body: value }), 400, /^body: must be object$/);
      expect(await storedIntegrations(t, website.id)).toEqual([]);
    });

    it('answers 400 for malformed JSON without echoing it', async () => {
      const { owner, website } = await ownerWithWebsite();
      const value = secret();
      const response = await call('POST', providerUrl(website.id, 'provider-one'), {
        token: owner.token,
        payload: `{"providerOneRestrictedKey": "${value}"`,
        headers: { 'content-type': 'application/json' },
      });
      expectError(response, 400, /not valid JSON/);
      expect(await storedIntegrations(t, website.id)).toEqual([]);
    });
  });

  describe('DELETE disconnect', () => {
    it.each(PROVIDERS)('answers disconnected: false for %s when it is not connected, every time', async (provider) => {
      const { owner, website } = await ownerWithWebsite();
      for (let i = 0; i < 2; i++) {
        const response = await call('DELETE', providerUrl(website.id, provider), { token: owner.token });
        expect(response.status, response.raw).toBe(200);
        expect(response.body).toEqual({ status: 'success', data: [{ message: expect.any(String), disconnected: false }] });
      }
      expect(await status(owner.token, website.id)).toEqual(NOTHING_CONNECTED);
    });

    it.each(CONNECTABLE)('disconnects %s once, then answers disconnected: false', async (provider) => {
      const { owner, website } = await ownerWithWebsite();
      await connect(owner.token, website.id, provider);
      const first = await call('DELETE', providerUrl(website.id, provider), { token: owner.token });
      expect(first.body).toEqual({ status: 'success', data: [{ message: expect.stringContaining(provider), disconnected: true }] });
      expect(await storedIntegrations(t, website.id)).toEqual([]);
      expect(await status(owner.token, website.id)).toEqual(NOTHING_CONNECTED);
      const second = await call('DELETE', providerUrl(website.id, provider), { token: owner.token });
      expect(second.body).toEqual({ status: 'success', data: [{ message: expect.any(String), disconnected: false }] });
    });

    it.each(NOT_CONNECTABLE)('disconnects %s when a connection exists (made outside this interface)', async (provider) => {
      const { owner, website } = await ownerWithWebsite();
      const sealed = sealCredentials(t.app.keyring, website.id, provider, { accessToken: secret() });
      const now = new Date().toISOString();
      await t.db
        .insertInto('integrations')
        .values({ website_id: website.id, provider, key_id: sealed.keyId, ciphertext: sealed.ciphertext, connected_at: now, updated_at: now })
        .execute();
      expect((await status(owner.token, website.id))[provider]).toEqual({ connected: true, connectedAt: now });

      const first = await call('DELETE', providerUrl(website.id, provider), { token: owner.token });
      expect(first.body).toEqual({ status: 'success', data: [{ message: expect.any(String), disconnected: true }] });
      expect(await storedIntegrations(t, website.id)).toEqual([]);
      const second = await call('DELETE', providerUrl(website.id, provider), { token: owner.token });
      expect(second.body.data).toEqual([{ message: expect.any(String), disconnected: false }]);
    });

    it('disconnects only the provider named, on the website named', async () => {
      const { owner, website } = await ownerWithWebsite();
      const other = await createWebsite(t, owner.token);
      await connect(owner.token, website.id, 'provider-one');
      await connect(owner.token, website.id, 'provider-two');
      await connect(owner.token, other.id, 'provider-one');
      const response = await call('DELETE', providerUrl(website.id, 'provider-one'), { token: owner.token });
      expect(response.body.data[0].disconnected).toBe(true);
      expect((await storedIntegrations(t, website.id)).map((r) => r.provider)).toEqual(['provider-two']);
      expect((await storedIntegrations(t, other.id)).map((r) => r.provider)).toEqual(['provider-one']);
    });
  });

  describe('PATCH provider-four (re-sync)', () => {
    const RESYNC = 'provider-four';

    it('answers 400 when provider-four is not connected and queues nothing', async () => {
      const { owner, website } = await ownerWithWebsite();
      await connect(owner.token, website.id, 'provider-one');
      expectError(await call('PATCH', providerUrl(website.id, RESYNC), { token: owner.token }), 400, /provider-four is not connected/);
      expect(await storedJobs(t, website.id)).toEqual([]);
    });

    it('queues a persisted job and shows it as resync in the status', async () => {
      const { owner, website } = await ownerWithWebsite();
      const { item } = await connect(owner.token, website.id, RESYNC);
      const response = await call('PATCH', providerUrl(website.id, RESYNC), { token: owner.token });
      expect(response.status, response.raw).toBe(200);
      const resync = { status: 'queued', requestedAt: expect.stringMatching(ISO_MS), finishedAt: null, error: null };
      expect(response.body).toEqual({ status: 'success', data: [{ message: expect.any(String), resync }] });
      const { requestedAt } = response.body.data[0].resync;

      const jobs = await storedJobs(t, website.id);
      expect(jobs).toEqual([
        {
          id: expect.stringMatching(/^[0-9a-f]{24}$/),
          website_id: website.id,
          provider: RESYNC,
          kind: 'resync',
          status: 'queued',
          attempts: 0,
          error: null,
          requested_at: requestedAt,
          started_at: null,
          finished_at: null,
          lease_owner: null,
          locked_until: null,
          run_after: null,
          cursor: null,
          pages_done: 0,
          payments_imported: 0,
        },
      ]);
      // Connecting queued it; the re-sync asked for right after is that job.
      expect(requestedAt).toBe(item.connectedAt);
      expect(await status(owner.token, website.id)).toEqual({
        ...NOTHING_CONNECTED,
        [RESYNC]: {
          connected: true,
          connectedAt: item.connectedAt,
          account: VERIFYING,
          history: queuedHistory(requestedAt),
          resync: { status: 'queued', requestedAt, finishedAt: null, error: null },
          keyExpiresAt: null,
        },
      });
    });

    it('accepts an empty JSON object as the body', async () => {
      const { owner, website } = await ownerWithWebsite();
      await connect(owner.token, website.id, RESYNC);
      const response = await call('PATCH', providerUrl(website.id, RESYNC), { token: owner.token, body: {} });
      expect(response.status, response.raw).toBe(200);
      expect(await storedJobs(t, website.id)).toHaveLength(1);
    });

    it('answers 400 for a body field and queues nothing', async () => {
      const { owner, website } = await ownerWithWebsite();
      await connect(owner.token, website.id, RESYNC);
      const before = await storedJobs(t, website.id);
      const value = secret();
      const response = await call('PATCH', providerUrl(website.id, RESYNC), { token: owner.token, body: { providerFourApiKey: value } });
      expectError(response, 400);
      expect(response.body.error.message).toBe('body.providerFourApiKey: is not an allowed field');
      expect(await storedJobs(t, website.id)).toEqual(before);
    });

    it('does not queue a second job while one is queued', async () => {
      const { owner, website } = await ownerWithWebsite();
      await connect(owner.token, website.id, RESYNC);
      const first = await call('PATCH', providerUrl(website.id, RESYNC), { token: owner.token });
      const second = await call('PATCH', providerUrl(website.id, RESYNC), { token: owner.token });
      expect(second.status, second.raw).toBe(200);
      expect(second.body.data).toEqual([{ message: expect.stringMatching(/already queued/), resync: first.body.data[0].resync }]);
      expect(await storedJobs(t, website.id)).toHaveLength(1);
    });

    it('queues one job when several re-syncs are asked for at the same time', async () => {
      for (let round = 0; round < 5; round++) {
        const { owner, website } = await ownerWithWebsite();
        await connect(owner.token, website.id, RESYNC);
        const answers = await Promise.all(
          Array.from({ length: 6 }, () => call('PATCH', providerUrl(website.id, RESYNC), { token: owner.token })),
        );
        expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
        expect(await storedJobs(t, website.id), `round ${round}`).toHaveLength(1);
        expect(new Set(answers.map((a) => a.body.data[0].resync.requestedAt)).size).toBe(1);
      }
    });

    it('never leaves a job queued for a disconnected integration when re-sync and disconnect race', async () => {
      for (let round = 0; round < 5; round++) {
        const { owner, website } = await ownerWithWebsite();
        await connect(owner.token, website.id, RESYNC);
        await Promise.all([
          call('PATCH', providerUrl(website.id, RESYNC), { token: owner.token }),
          call('DELETE', providerUrl(website.id, RESYNC), { token: owner.token }),
        ]);
        expect(await storedIntegrations(t, website.id)).toEqual([]);
        const open = (await storedJobs(t, website.id)).filter((j) => j.status === 'queued' || j.status === 'running');
        expect(open, `round ${round}`).toEqual([]);
      }
    });

    it('fails the queued job on disconnect, hides it, and does not show it after reconnecting', async () => {
      const { owner, website } = await ownerWithWebsite();
      await connect(owner.token, website.id, RESYNC);
      await call('PATCH', providerUrl(website.id, RESYNC), { token: owner.token });
      const disconnected = await call('DELETE', providerUrl(website.id, RESYNC), { token: owner.token });
      expect(disconnected.body.data[0].disconnected).toBe(true);

      const [job] = await storedJobs(t, website.id);
      expect(job).toMatchObject({ status: 'failed', error: expect.stringMatching(/cancelled/), finished_at: expect.stringMatching(ISO_MS) });
      expect((await status(owner.token, website.id))[RESYNC]).toEqual(NOTHING_CONNECTED[RESYNC]);

      // Connecting again queues the new connection's own job, not the cancelled one.
      const { item } = await connect(owner.token, website.id, RESYNC);
      expect((await status(owner.token, website.id))[RESYNC]).toEqual({
        connected: true,
        connectedAt: item.connectedAt,
        account: VERIFYING,
        history: queuedHistory(item.connectedAt),
        resync: { status: 'queued', requestedAt: item.connectedAt, finishedAt: null, error: null },
        keyExpiresAt: null,
      });

      // The cancelled job does not block a new one.
      const again = await call('PATCH', providerUrl(website.id, RESYNC), { token: owner.token });
      expect(again.body.data[0].resync.status).toBe('queued');
      const jobs = await storedJobs(t, website.id);
      expect(jobs.map((j) => j.status)).toEqual(['failed', 'queued']);
      expect((await status(owner.token, website.id))[RESYNC].resync).toEqual(again.body.data[0].resync);
    });

    it('keeps showing a queued job when the credentials are replaced, and queues no second one', async () => {
      const { owner, website } = await ownerWithWebsite();
      await connect(owner.token, website.id, RESYNC);
      const queued = await call('PATCH', providerUrl(website.id, RESYNC), { token: owner.token });
      await connect(owner.token, website.id, RESYNC);
      expect((await status(owner.token, website.id))[RESYNC].resync).toEqual(queued.body.data[0].resync);
      const again = await call('PATCH', providerUrl(website.id, RESYNC), { token: owner.token });
      expect(again.body.data[0].message).toMatch(/already queued/);
      expect(await storedJobs(t, website.id)).toHaveLength(1);
    });

    it('disconnecting another provider leaves the re-sync alone', async () => {
      const { owner, website } = await ownerWithWebsite();
      await connect(owner.token, website.id, 'provider-one');
      await connect(owner.token, website.id, RESYNC);
      await call('PATCH', providerUrl(website.id, RESYNC), { token: owner.token });
      await call('DELETE', providerUrl(website.id, 'provider-one'), { token: owner.token });
      expect((await storedJobs(t, website.id)).map((j) => j.status)).toEqual(['queued']);
    });
  });

  describe('access', () => {
    /** One request per route, for the checks that apply to all of them. */
    const routes = (websiteId: string): [string, string, unknown?][] => [
      ['GET', integrationsUrl(websiteId)],
      ['POST', providerUrl(websiteId, 'provider-one'), { providerOneRestrictedKey: secret() }],
      ['DELETE', providerUrl(websiteId, 'provider-two')],
      ['PATCH', providerUrl(websiteId, 'provider-four')],
    ];

    /** A website with provider-two and provider-four connected, as a baseline. */
    async function baseline() {
      const { owner, website } = await ownerWithWebsite();
      await connect(owner.token, website.id, 'provider-two');
      await connect(owner.token, website.id, 'provider-four');
      return { owner, website };
    }

    async function snapshot(websiteId: string) {
      return { integrations: await storedIntegrations(t, websiteId), jobs: await storedJobs(t, websiteId) };
    }

    it('answers 401 without a credential on every route, changing nothing', async () => {
      const { website } = await baseline();
      const before = await snapshot(website.id);
      for (const [method, url, body] of routes(website.id)) {
        const response = await call(method, url, { body });
        expectError(response, 401);
        expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
      }
      expect(await snapshot(website.id)).toEqual(before);
    });

    it('answers 403 for GET without settings:read', async () => {
      const { owner, website } = await baseline();
      const writeOnly = await createToken(t, owner, ['settings:write', 'websites:read']);
      expectError(await call('GET', integrationsUrl(website.id), { token: writeOnly }), 403, /settings:read/);
    });

    it('answers 403 for POST, DELETE and PATCH without settings:write, changing nothing', async () => {
      const { owner, website } = await baseline();
      const readOnly = await createToken(t, owner, ['settings:read']);
      const before = await snapshot(website.id);
      for (const [method, url, body] of routes(website.id).slice(1)) {
        expectError(await call(method, url, { token: readOnly, body }), 403, /settings:write/);
      }
      expect(await snapshot(website.id)).toEqual(before);
      expect((await call('GET', integrationsUrl(website.id), { token: readOnly })).status).toBe(200);
    });

    it('lets settings:write alone connect, disconnect and re-sync', async () => {
      const { owner, website } = await baseline();
      const writeOnly = await createToken(t, owner, ['settings:write']);
      for (const [method, url, body] of routes(website.id).slice(1)) {
        const response = await call(method, url, { token: writeOnly, body });
        expect(response.status, `${method} ${url}: ${response.raw}`).toBe(200);
      }
      const after = await snapshot(website.id);
      expect(after.integrations.map((r) => r.provider)).toEqual(['provider-four', 'provider-one']);
      expect(after.jobs.map((j) => j.status)).toEqual(['queued']);
    });

    it('lets a viewer read the status but not connect, disconnect or re-sync', async () => {
      const { website } = await baseline();
      const viewer = await createAccount(t);
      await addMember(t, website.id, viewer.id, 'viewer');
      const before = await snapshot(website.id);
      const read = await call('GET', integrationsUrl(website.id), { token: viewer.token });
      expect(read.status, read.raw).toBe(200);
      expect(read.body.data[0]['provider-two'].connected).toBe(true);
      for (const [method, url, body] of routes(website.id).slice(1)) {
        expectError(await call(method, url, { token: viewer.token, body }), 403, /role \(viewer\)/);
      }
      expect(await snapshot(website.id)).toEqual(before);
    });

    it('lets a member read, connect, re-sync and disconnect', async () => {
      const { website } = await baseline();
      const member = await createAccount(t);
      await addMember(t, website.id, member.id, 'member');
      for (const [method, url, body] of routes(website.id)) {
        const response = await call(method, url, { token: member.token, body });
        expect(response.status, `${method} ${url}: ${response.raw}`).toBe(200);
      }
      const after = await snapshot(website.id);
      expect(after.integrations.map((r) => r.provider)).toEqual(['provider-four', 'provider-one']);
      expect(after.jobs.map((j) => j.status)).toEqual(['queued']);
    });

    it('answers 403 for a token limited to other websites, changing nothing', async () => {
      const { owner, website } = await baseline();
      const other = await createWebsite(t, owner.token);
      const limited = await createToken(t, owner, ['*'], [other.id]);
      const before = await snapshot(website.id);
      for (const [method, url, body] of routes(website.id)) {
        expectError(await call(method, url, { token: limited, body }), 403, /not allowed to access this website/);
      }
      expect(await snapshot(website.id)).toEqual(before);
      expect((await call('GET', integrationsUrl(other.id), { token: limited })).status).toBe(200);
    });

    it('lets a df_ key act on its own website', async () => {
      const { owner, website } = await baseline();
      const key = await createApiKey(t, owner.token, website.id);
      for (const [method, url, body] of routes(website.id)) {
        const response = await call(method, url, { token: key.key, body });
        expect(response.status, `${method} ${url}: ${response.raw}`).toBe(200);
      }
      expect((await snapshot(website.id)).jobs).toHaveLength(1);
    });

    it('answers 403 for a df_ key on another website of the same account, changing nothing', async () => {
      const { owner, website } = await baseline();
      const other = await createWebsite(t, owner.token);
      const key = await createApiKey(t, owner.token, other.id);
      const before = await snapshot(website.id);
      for (const [method, url, body] of routes(website.id)) {
        expectError(await call(method, url, { token: key.key, body }), 403, /another website/);
      }
      expect(await snapshot(website.id)).toEqual(before);
    });

    it("answers 404 for another account's website, even with a bad body, changing nothing", async () => {
      const { website } = await baseline();
      const stranger = await createAccount(t);
      const before = await snapshot(website.id);
      for (const [method, url, body] of routes(website.id)) {
        expectError(await call(method, url, { token: stranger.token, body }), 404, /Website not found/);
      }
      expectError(
        await call('POST', providerUrl(website.id, 'provider-one'), { token: stranger.token, body: { providerOneRestrictedKey: '' } }),
        404,
        /Website not found/,
      );
      expect(await snapshot(website.id)).toEqual(before);
    });

    it('answers 404 for an unknown website id and 400 for a malformed one', async () => {
      const owner = await createAccount(t);
      for (const [method, url, body] of routes(UNKNOWN_ID)) {
        expectError(await call(method, url, { token: owner.token, body }), 404, /Website not found/);
      }
      expectError(await call('GET', integrationsUrl('not-an-id'), { token: owner.token }), 400, /path\.websiteId/);
    });

    it('checks the permission before the body', async () => {
      const { owner, website } = await baseline();
      const readOnly = await createToken(t, owner, ['settings:read']);
      const response = await call('POST', providerUrl(website.id, 'provider-one'), { token: readOnly, body: { nope: secret() } });
      expectError(response, 403, /settings:write/);
    });
  });

  // Runs last: every response of this suite and every log line, checked for every credential
  // value the suite sent, accepted or refused.
  it('never returned or logged a credential value sent in this suite', async () => {
    expect(secrets.length).toBeGreaterThan(100);
    expect(responses.length).toBeGreaterThan(100);
    expect(responses.some((r) => r.status === 400)).toBe(true);
    const bodies = responses.map((r) => r.raw).join('\n');
    const log = t.logLines.join('\n');
    expect(log.length).toBeGreaterThan(0);
    const stored = JSON.stringify(await t.db.selectFrom('integrations').selectAll().execute());
    for (const value of secrets) {
      expect(bodies.includes(value), `a response contains ${value}`).toBe(false);
      expect(log.includes(value), `the log contains ${value}`).toBe(false);
      expect(stored.includes(value), `the integrations table contains ${value}`).toBe(false);
    }
    // Not even the random part of a credential, in case it were echoed cut or re-quoted.
    for (const value of secrets) {
      const core = value.slice('sk_live_'.length, 'sk_live_'.length + 32);
      expect(bodies.includes(core) || log.includes(core), `a part of ${value} leaked`).toBe(false);
    }
  });
});

describeEachEngine('integration jobs (worker side)', (engine) => {
  // A database of its own: claimNextJob takes the oldest queued job of any website.
  const t = useTestApp(engine);
  const { call, connect, status, ownerWithWebsite } = integrationsHarness(t);
  const RESYNC = 'provider-four';

  it('claims a queued job exactly once, even when two workers ask at the same time', async () => {
    const { owner, website } = await ownerWithWebsite();
    await connect(owner.token, website.id, RESYNC);
    const queued = await call('PATCH', providerUrl(website.id, RESYNC), { token: owner.token });
    const { requestedAt } = queued.body.data[0].resync;

    const startedAt = new Date().toISOString();
    const claims = await Promise.all([claimNextJob(t.db, 'resync', startedAt), claimNextJob(t.db, 'resync', startedAt)]);
    const claimed = claims.filter((c) => c !== undefined);
    expect(claimed).toHaveLength(1);
    expect(claimed[0]).toMatchObject({ website_id: website.id, provider: RESYNC, status: 'running', attempts: 1, started_at: startedAt });
    expect(await claimNextJob(t.db, 'resync', new Date().toISOString())).toBeUndefined();

    const jobs = await storedJobs(t, website.id);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({ id: claimed[0]!.id, status: 'running', attempts: 1, started_at: startedAt, finished_at: null });
    expect((await status(owner.token, website.id))[RESYNC].resync).toEqual({ status: 'running', requestedAt, finishedAt: null, error: null });

    // While it runs, asking again queues nothing.
    const again = await call('PATCH', providerUrl(website.id, RESYNC), { token: owner.token });
    expect(again.body.data[0].message).toMatch(/already running/);
    expect(await storedJobs(t, website.id)).toHaveLength(1);

    const finishedAt = new Date().toISOString();
    await finishJob(t.db, claimed[0]!.id, { status: 'succeeded' }, finishedAt);
    expect((await storedJobs(t, website.id))[0]).toMatchObject({ status: 'succeeded', attempts: 1, finished_at: finishedAt, error: null });
    expect((await status(owner.token, website.id))[RESYNC].resync).toEqual({ status: 'succeeded', requestedAt, finishedAt, error: null });

    // Once finished, a new re-sync can be queued.
    const next = await call('PATCH', providerUrl(website.id, RESYNC), { token: owner.token });
    expect(next.body.data[0].resync.status).toBe('queued');
    expect((await storedJobs(t, website.id)).map((j) => j.status)).toEqual(['succeeded', 'queued']);
  });

  it('claims the oldest queued job first and shows a failure with its error', async () => {
    const first = await ownerWithWebsite();
    const second = await ownerWithWebsite();
    for (const { owner, website } of [first, second]) {
      await connect(owner.token, website.id, RESYNC);
      await call('PATCH', providerUrl(website.id, RESYNC), { token: owner.token });
    }
    // Whatever the first test left queued is claimed first.
    let claimed = await claimNextJob(t.db, 'resync', new Date().toISOString());
    while (claimed && claimed.website_id !== first.website.id) {
      expect(claimed.website_id).not.toBe(second.website.id);
      claimed = await claimNextJob(t.db, 'resync', new Date().toISOString());
    }
    expect(claimed?.website_id).toBe(first.website.id);
    const finishedAt = new Date().toISOString();
    await finishJob(t.db, claimed!.id, { status: 'failed', error: 'provider answered 401' }, finishedAt);
    expect((await status(first.owner.token, first.website.id))[RESYNC].resync).toMatchObject({
      status: 'failed',
      finishedAt,
      error: 'provider answered 401',
    });
    expect((await status(second.owner.token, second.website.id))[RESYNC].resync.status).toBe('queued');
    expect((await claimNextJob(t.db, 'resync', new Date().toISOString()))?.website_id).toBe(second.website.id);
    expect(await claimNextJob(t.db, 'other-kind', new Date().toISOString())).toBeUndefined();
  });
});
