import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openWebhookSecret } from '../src/modules/integrations/credentials.ts';
import { type TestApp, useTestApp } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { UNKNOWN_ID, addMember, createAccount, createApiKey, createToken, createWebsite, expectError } from './helpers/factories.ts';
import { PROVIDER_DELIVERIES, deliveriesOf } from './helpers/provider-webhooks.ts';
import { API_PROVIDERS, ISO_MS, expectNoSecretLeaked, integrationsUrl, nextId, receiverUrl, received, secretUrl, webhookHarness } from './helpers/webhook-harness.ts';

// The webhook settings: PUT .../integrations/{provider}/webhook (the signing secret, write-only;
// how providers five and six connect) and POST .../integrations/{provider}/resync (API providers).
// Who may call them, what they answer and store, and that the secret never comes back.

const WEBHOOK_ONLY = ['provider-five', 'provider-six'];
const resyncUrl = (websiteId: string, provider: string) => `${integrationsUrl(websiteId)}/${provider}/resync`;

const integrations = (t: TestApp, websiteId: string) => t.db.selectFrom('integrations').selectAll().where('website_id', '=', websiteId).orderBy('provider').execute();
const jobs = (t: TestApp, websiteId: string) =>
  t.db.selectFrom('integration_jobs').selectAll().where('website_id', '=', websiteId).orderBy('provider').orderBy('requested_at').orderBy('id').execute();

describeEachEngine('provider webhooks: the settings routes', (engine) => {
  const t = useTestApp(engine);
  const h = webhookHarness(t);

  /** A delivery of a new checkout to `provider` on the website, signed with `secret`. */
  const checkoutSignedWith = (websiteId: string, provider: string, secret: string) => {
    const id = nextId();
    return h.deliver(receiverUrl(provider, websiteId), deliveriesOf(provider).checkout({ secret, id, eventId: `evt_${id}`, visitorId: randomUUID() }));
  };

  describe('PUT .../webhook', () => {
    it.each(WEBHOOK_ONLY)('connects %s by its secret, in the exact shape, and stores the secret sealed', async (provider) => {
      const { owner, website } = await h.ownerWithWebsite();
      const secret = h.secret();
      const hostedName = deliveriesOf(provider).hostedName;
      const response = await h.call('PUT', secretUrl(website.id, hostedName), { token: owner.token, body: { signingSecret: secret } });
      expect(response.status, response.raw).toBe(200);
      const webhook = { url: `${t.config.publicUrl}${receiverUrl(hostedName, website.id)}`, secretSet: true, secretSetAt: expect.stringMatching(ISO_MS), lastEventAt: null, lastEventType: null, eventsReceived: 0 };
      expect(response.body).toEqual({ status: 'success', data: [{ message: `${provider} connected by its webhook`, provider, connected: true, connectedAt: expect.stringMatching(ISO_MS), webhook }] });
      const { connectedAt } = response.body.data[0];
      expect(response.body.data[0].webhook.secretSetAt).toBe(connectedAt);

      const [row, ...more] = await integrations(t, website.id);
      expect(more).toEqual([]);
      expect(row).toMatchObject({ provider, connected_at: connectedAt, webhook_key_id: t.app.keyring.currentId });
      expect(JSON.stringify(row)).not.toContain(secret);
      expect(openWebhookSecret(t.app.keyring, row as Parameters<typeof openWebhookSecret>[1])).toBe(secret);
      expect(await h.webhookStatus(owner.token, website.id, provider, hostedName)).toEqual({ connected: true, connectedAt, webhook });

      // Pasting another secret replaces it; the connection stays as it was.
      const again = await h.call('PUT', secretUrl(website.id, provider), { token: owner.token, body: { signingSecret: h.secret() } });
      expect(again.body.data[0]).toEqual({ message: `${provider} webhook signing secret stored`, provider, connected: true, connectedAt, webhook });
      expect(again.body.data[0].webhook.secretSetAt >= connectedAt).toBe(true);
      expect(await integrations(t, website.id)).toHaveLength(1);
    });

    it.each(API_PROVIDERS)('answers 400 for %s before it is connected, storing nothing; 200 once connected', async (provider) => {
      const { owner, website } = await h.ownerWithWebsite();
      const refused = await h.call('PUT', secretUrl(website.id, provider), { token: owner.token, body: { signingSecret: h.secret() } });
      expectError(refused, 400, new RegExp(`^${provider} is not connected; connect it with its API credential`));
      expect(await integrations(t, website.id)).toEqual([]);

      await h.connectApi(owner.token, website.id, provider);
      const [connection] = await integrations(t, website.id);
      const stored = await h.putSecret(owner.token, website.id, provider, h.secret());
      expect(stored).toMatchObject({ message: `${provider} webhook signing secret stored`, provider, connected: true, connectedAt: connection!.connected_at, webhook: { secretSet: true } });
    });

    it.each(API_PROVIDERS)('keeps the secret of %s when its credential is replaced', async (provider) => {
      const { owner, website, secret } = await h.connected(provider);
      await h.connectApi(owner.token, website.id, provider);
      expect((await checkoutSignedWith(website.id, provider, secret)).body).toEqual(received(1));
    });

    it.each(PROVIDER_DELIVERIES.map((d) => d.provider))('verifies %s deliveries with the latest secret only', async (provider) => {
      const { owner, website, secret: first } = await h.connected(provider);
      expect((await checkoutSignedWith(website.id, provider, first)).body).toEqual(received(1));
      const second = h.secret();
      await h.putSecret(owner.token, website.id, provider, second);
      expectError(await checkoutSignedWith(website.id, provider, first), 400, /signature does not verify/);
      expect((await checkoutSignedWith(website.id, provider, second)).body).toEqual(received(1));
      expect(await h.payments(website.id)).toHaveLength(2);
    });

    it('accepts a secret of 512 characters, spaces inside', async () => {
      const { owner, website } = await h.ownerWithWebsite();
      const secret = `${h.secret(256)} ${h.secret(255)}`;
      expect(secret).toHaveLength(512);
      await h.putSecret(owner.token, website.id, 'provider-five', secret);
      expect((await checkoutSignedWith(website.id, 'provider-five', secret)).body).toEqual(received(1));
    });

    const BAD: { label: string; body: () => unknown; path: string; message: string }[] = [
      { label: 'no signingSecret', body: () => ({}), path: 'body.signingSecret', message: 'is required' },
      { label: 'an empty one', body: () => ({ signingSecret: '' }), path: 'body.signingSecret', message: 'must NOT have fewer than 1 characters' },
      { label: 'one of 513 characters', body: () => ({ signingSecret: h.secret(513) }), path: 'body.signingSecret', message: 'must NOT have more than 512 characters' },
      { label: 'a leading space', body: () => ({ signingSecret: ` ${h.secret()}` }), path: 'body.signingSecret', message: 'must match pattern "^\\S(?:.*\\S)?$"' },
      { label: 'a trailing newline', body: () => ({ signingSecret: `${h.secret()}\n` }), path: 'body.signingSecret', message: 'must match pattern "^\\S(?:.*\\S)?$"' },
      { label: 'a number', body: () => ({ signingSecret: 12345678 }), path: 'body.signingSecret', message: 'must be string' },
      // An extra field is named itself, so a mistyped name says which.
      { label: 'an extra field', body: () => ({ signingSecret: h.secret(), webhookSecret: h.secret() }), path: 'body.webhookSecret', message: 'is not an allowed field' },
    ];

    it.each(BAD)('answers 400 for $label, naming the field, echoing nothing, changing nothing', async ({ body, path, message }) => {
      const { owner, website } = await h.connected('provider-six');
      await h.connectApi(owner.token, website.id, 'provider-one');
      const before = await integrations(t, website.id);
      for (const provider of ['provider-one', 'provider-six', 'provider-five']) {
        const sent = body();
        const response = await h.call('PUT', secretUrl(website.id, provider), { token: owner.token, body: sent });
        expectError(response, 400);
        expect(response.body.error.message).toBe(`${path}: ${message}`);
        expect(response.body.error.details).toEqual([{ path, message }]);
      }
      expect(await integrations(t, website.id)).toEqual(before);
    });
  });

  describe('POST .../resync', () => {
    it.each(API_PROVIDERS)('for %s: the job connecting queued, then a new one once it ended, never two at once', async (provider) => {
      const { owner, website } = await h.ownerWithWebsite();
      await h.connectApi(owner.token, website.id, provider);
      const [connection] = await integrations(t, website.id);
      const pending = await h.call('POST', resyncUrl(website.id, provider), { token: owner.token });
      const connectJob = { status: 'queued', requestedAt: connection!.connected_at, finishedAt: null, error: null };
      expect(pending.body).toEqual({ status: 'success', data: [{ message: 'A re-sync is already queued', resync: connectJob }] });

      const finishedAt = new Date().toISOString();
      await t.db.updateTable('integration_jobs').set({ status: 'succeeded', finished_at: finishedAt }).where('website_id', '=', website.id).execute();
      const queued = await h.call('POST', resyncUrl(website.id, provider), { token: owner.token, body: {} });
      expect(queued.body).toEqual({ status: 'success', data: [{ message: 'Re-sync of historical payments queued', resync: { status: 'queued', requestedAt: expect.stringMatching(ISO_MS), finishedAt: null, error: null } }] });
      const again = await h.call('POST', resyncUrl(website.id, deliveriesOf(provider).hostedName), { token: owner.token });
      expect(again.body.data).toEqual([{ message: 'A re-sync is already queued', resync: queued.body.data[0].resync }]);
      expect((await jobs(t, website.id)).map((j) => [j.provider, j.kind, j.status])).toEqual([
        [provider, 'resync', 'succeeded'],
        [provider, 'resync', 'queued'],
      ]);
    });

    it.each(API_PROVIDERS)('answers 400 for %s when it is not connected, queueing nothing', async (provider) => {
      const { owner, website } = await h.ownerWithWebsite();
      await h.putSecret(owner.token, website.id, 'provider-five', h.secret()); // another provider's connection does not count
      expectError(await h.call('POST', resyncUrl(website.id, provider), { token: owner.token }), 400, new RegExp(`^${provider} is not connected`));
      expect(await jobs(t, website.id)).toEqual([]);
    });

    it('has no route for the webhook-only providers, nor a body field', async () => {
      const { owner, website } = await h.connected('provider-five');
      for (const name of ['provider-five', 'shopify', 'provider-six', 'woocommerce']) {
        expectError(await h.call('POST', resyncUrl(website.id, name), { token: owner.token }), 404, /^No route POST/);
      }
      await h.connectApi(owner.token, website.id, 'provider-two');
      expectError(await h.call('POST', resyncUrl(website.id, 'provider-two'), { token: owner.token, body: { full: true } }), 400, /^body\.full: is not an allowed field$/);
      expect((await jobs(t, website.id)).map((j) => j.provider)).toEqual(['provider-two']);
    });
  });

  describe('access', () => {
    /** One request per route: a secret for an API provider and for a webhook-only one, and a re-sync. */
    const routes = (websiteId: string): [string, string, unknown?][] => [
      ['PUT', secretUrl(websiteId, 'provider-one'), { signingSecret: h.secret() }],
      ['PUT', secretUrl(websiteId, 'shopify'), { signingSecret: h.secret() }],
      ['POST', resyncUrl(websiteId, 'provider-one')],
    ];

    /** A website with provider-one connected (its job ended, so a re-sync would queue one) and provider-six by its secret. */
    async function baseline() {
      const { owner, website } = await h.connected('provider-six');
      await h.connectApi(owner.token, website.id, 'provider-one');
      await t.db.updateTable('integration_jobs').set({ status: 'succeeded', finished_at: new Date().toISOString() }).where('website_id', '=', website.id).execute();
      return { owner, website };
    }
    const snapshot = async (websiteId: string) => ({ integrations: await integrations(t, websiteId), jobs: await jobs(t, websiteId) });

    async function refusedAll(websiteId: string, token: string | undefined, status: number, pattern: RegExp) {
      const before = await snapshot(websiteId);
      for (const [method, url, body] of routes(websiteId)) {
        const response = await h.call(method, url, { token, body });
        expectError(response, status, pattern);
        if (status === 401) expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
      }
      expect(await snapshot(websiteId)).toEqual(before);
    }

    async function allowedAll(websiteId: string, token: string) {
      for (const [method, url, body] of routes(websiteId)) {
        const response = await h.call(method, url, { token, body });
        expect(response.status, `${method} ${url}: ${response.raw}`).toBe(200);
      }
      const after = await snapshot(websiteId);
      expect(after.integrations.map((r) => [r.provider, r.webhook_key_id !== null])).toEqual([
        ['provider-five', true],
        ['provider-one', true],
        ['provider-six', true],
      ]);
      expect(after.jobs.map((j) => j.status)).toEqual(['succeeded', 'queued']);
    }

    it('answers 401 without a credential', async () => {
      const { website } = await baseline();
      await refusedAll(website.id, undefined, 401, /./);
    });

    it('answers 403 to a token without settings:write, even with settings:read', async () => {
      const { owner, website } = await baseline();
      await refusedAll(website.id, await createToken(t, owner, ['settings:read', 'websites:read']), 403, /settings:write/);
    });

    it('answers 403 to a viewer of the website', async () => {
      const { website } = await baseline();
      const viewer = await createAccount(t);
      await addMember(t, website.id, viewer.id, 'viewer');
      await refusedAll(website.id, viewer.token, 403, /role \(viewer\)/);
    });

    it('answers 403 to a token limited to another website, and to that website df_ key', async () => {
      const { owner, website } = await baseline();
      const other = await createWebsite(t, owner.token);
      await refusedAll(website.id, await createToken(t, owner, ['*'], [other.id]), 403, /not allowed to access this website/);
      await refusedAll(website.id, (await createApiKey(t, owner.token, other.id)).key, 403, /another website/);
    });

    it("answers 404 for another account's website, and for one that does not exist", async () => {
      const { website } = await baseline();
      const stranger = await createAccount(t);
      await refusedAll(website.id, stranger.token, 404, /Website not found/);
      for (const [method, url, body] of routes(UNKNOWN_ID)) expectError(await h.call(method, url, { token: stranger.token, body }), 404, /Website not found/);
    });

    it('lets settings:write alone, a member and the website df_ key do all three', async () => {
      const { owner, website } = await baseline();
      await allowedAll(website.id, await createToken(t, owner, ['settings:write']));
      const member = await createAccount(t);
      const second = await baseline();
      await addMember(t, second.website.id, member.id, 'member');
      await allowedAll(second.website.id, member.token);
      const third = await baseline();
      await allowedAll(third.website.id, (await createApiKey(t, third.owner.token, third.website.id)).key);
    });
  });

  // Runs last: every response of this suite and every log line, for every secret it sent.
  it('never returned or logged a signing secret, accepted or refused', () => {
    expect(h.responses.some((r) => r.status === 400)).toBe(true);
    expectNoSecretLeaked(t, h);
  });
});
