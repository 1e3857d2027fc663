import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { ApiResponse, RequestOptions, TestApp } from './app.ts';
import { type Website, pageview, send } from './browser-events.ts';
import { createAccount, createWebsite } from './factories.ts';
import type { SignedDelivery } from './provider-webhooks.ts';

// The receiver's and the webhook settings' tests share these: websites with a provider connected
// and its secret pasted, deliveries, and what a delivery may change (payments, remembered events,
// the webhook's status). Every response and every secret is kept, for the check that no secret
// ever left the server.

export const API_PROVIDERS = ['provider-one', 'provider-two', 'provider-three', 'provider-four'];
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** What a delivery that records its event answers. */
export const received = (payments: number) => ({ received: true, duplicate: false, payments, skipped: 0 });
/** What a redelivery answers. */
export const DUPLICATE = { received: true, duplicate: true, payments: 0, skipped: 0 };

export const integrationsUrl = (websiteId: string) => `/api/v1/admin/websites/${websiteId}/integrations`;
export const secretUrl = (websiteId: string, provider: string) => `${integrationsUrl(websiteId)}/${provider}/webhook`;
export const receiverUrl = (provider: string, websiteId: string) => `/api/webhooks/${provider}/${websiteId}`;

let serial = 1000;
/** A checkout or order number no other test uses. */
export const nextId = () => ++serial;

export function webhookHarness(t: TestApp) {
  const secrets: string[] = [];
  const responses: ApiResponse[] = [];

  const secret = (length?: number) => {
    let value = `whsec_${randomBytes(16).toString('hex')}`;
    if (length !== undefined) value = `${value}${'x'.repeat(Math.max(0, length - value.length))}`;
    secrets.push(value);
    return value;
  };

  const call = async (method: string, url: string, options?: RequestOptions) => {
    const response = await t.request(method, url, options);
    responses.push(response);
    return response;
  };

  const deliver = (url: string, delivery: SignedDelivery) => call('POST', url, { payload: delivery.payload, headers: delivery.headers });

  /** An API provider's credential, as test/integrations.test.ts connects it (no job runs in tests). */
  const connectApi = async (token: string, websiteId: string, provider: string) => {
    const fields: Record<string, string[]> = {
      'provider-one': ['providerOneRestrictedKey'],
      'provider-two': ['providerTwoApiKey', 'providerTwoStoreId'],
      'provider-three': ['providerThreeAccessToken', 'providerThreeOrgId'],
      'provider-four': ['providerFourApiKey'],
    };
    const body = Object.fromEntries(fields[provider]!.map((field) => [field, `sk_live_${randomBytes(12).toString('hex')}`]));
    const response = await call('POST', `${integrationsUrl(websiteId)}/${provider}`, { token, body });
    expect(response.status, response.raw).toBe(200);
  };

  const putSecret = async (token: string, websiteId: string, provider: string, signingSecret: string) => {
    const response = await call('PUT', secretUrl(websiteId, provider), { token, body: { signingSecret } });
    expect(response.status, response.raw).toBe(200);
    return response.body.data[0];
  };

  const ownerWithWebsite = async () => {
    const owner = await createAccount(t);
    const website = (await createWebsite(t, owner.token)) as Website;
    return { owner, website };
  };

  /** A website with `provider` connected (API providers by credential) and a signing secret pasted. */
  const connected = async (provider: string) => {
    const { owner, website } = await ownerWithWebsite();
    if (API_PROVIDERS.includes(provider)) await connectApi(owner.token, website.id, provider);
    const signingSecret = secret();
    await putSecret(owner.token, website.id, provider, signingSecret);
    return { owner, website, secret: signingSecret };
  };

  /** The provider's webhook as GET .../integrations shows it, under both names. */
  const webhookStatus = async (token: string, websiteId: string, provider: string, hostedName: string) => {
    const response = await call('GET', integrationsUrl(websiteId), { token });
    expect(response.status, response.raw).toBe(200);
    const item = response.body.data[0];
    expect(item[hostedName]).toEqual(item[provider]);
    return item[provider] as { connected: boolean; webhook: Record<string, unknown> & { url: string } };
  };

  /**
   * The payments as a delivery leaves them, booleans read alike on both engines. `counted` is left
   * out: the background fold sets it whenever it runs (migration 0038), so a snapshot taken before
   * a refused delivery could differ from one after it without the delivery writing anything.
   */
  const payments = async (websiteId: string) => {
    const rows = await t.db.selectFrom('payments').selectAll().where('website_id', '=', websiteId).orderBy('occurred_at').orderBy('id').execute();
    return rows.map(({ counted: _counted, ...row }) => ({ ...row, amount_minor: Number(row.amount_minor), renewal: Boolean(row.renewal), refunded: Boolean(row.refunded), is_free_trial: Boolean(row.is_free_trial), converted_minor: row.converted_minor === null ? null : Number(row.converted_minor) }));
  };

  const rememberedEvents = (websiteId: string) =>
    t.db.selectFrom('integration_webhook_events').selectAll().where('website_id', '=', websiteId).orderBy('received_at').orderBy('event_id').execute();

  /** Everything a delivery may write, for "nothing changed". */
  const stored = async (websiteId: string) => ({
    payments: await payments(websiteId),
    events: await rememberedEvents(websiteId),
    integrations: await t.db.selectFrom('integrations').selectAll().where('website_id', '=', websiteId).orderBy('provider').execute(),
  });

  /** A page view from Google, as the tracker posts it. */
  const visit = async (website: Website, visitorId: string) => {
    const response = await send(t, pageview(website, { visitorId, referrer: 'https://www.google.com/', href: `https://${website.domain}/pricing` }));
    expect(response.status, response.raw).toBe(200);
  };

  const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
  const readStats = async (token: string, websiteId: string, path: string) => {
    const query = { websiteId, startAt: day(-1), endAt: day(1), timezone: 'UTC' };
    const response = await call('GET', `/api/v1/analytics/${path}`, { token, query });
    expect(response.status, response.raw).toBe(200);
    return response.body.data;
  };
  const overview = async (token: string, websiteId: string) => {
    const [row] = await readStats(token, websiteId, 'overview');
    return { revenue: row.revenue, payments: row.payments };
  };
  const googleRevenue = async (token: string, websiteId: string) => {
    const rows = (await readStats(token, websiteId, 'referrers')) as { referrer: string; revenue: number }[];
    return rows.find((row) => row.referrer === 'Google')?.revenue;
  };

  return { secrets, responses, secret, call, deliver, connectApi, putSecret, ownerWithWebsite, connected, webhookStatus, payments, rememberedEvents, stored, visit, overview, googleRevenue };
}

/** Runs last in a suite: no secret it pasted or signed with reached a response or a log line. */
export function expectNoSecretLeaked(t: TestApp, harness: ReturnType<typeof webhookHarness>, extraSecrets: string[] = []) {
  const bodies = harness.responses.map((r) => r.raw).join('\n');
  const log = t.logLines.join('\n');
  expect(harness.secrets.length).toBeGreaterThan(10);
  expect(log.length).toBeGreaterThan(0);
  for (const value of [...harness.secrets, ...extraSecrets]) {
    expect(bodies.includes(value), `a response contains ${value}`).toBe(false);
    expect(log.includes(value), `the log contains ${value}`).toBe(false);
    // Nor the random part, in case it were cut or re-quoted.
    const core = value.slice('whsec_'.length, 'whsec_'.length + 32);
    expect(bodies.includes(core) || log.includes(core), `a part of ${value} leaked`).toBe(false);
  }
}
