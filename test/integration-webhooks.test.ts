import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useTestApp } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { UNKNOWN_ID, createApiKey, createWebsite, expectError } from './helpers/factories.ts';
import { FORGER_SECRET, PROVIDER_DELIVERIES, type ProviderDeliveries, wooCommerceSignature } from './helpers/provider-webhooks.ts';
import { API_PROVIDERS, DUPLICATE, ISO_MS, expectNoSecretLeaked, nextId, receiverUrl, received, webhookHarness } from './helpers/webhook-harness.ts';

// The receiver, POST /api/webhooks/{provider}/{websiteId}, end to end: each provider's signed
// deliveries become payments attributed to the visitor, renewals and refunds, counted in the
// website API's revenue; redeliveries and forgeries change nothing; what is not connected is 410.
// The settings routes (PUT .../webhook, POST .../resync) are in integration-webhooks-routes.test.ts.

/** The provider's name for its refund event: the last event the status shows after the flow. */
const REFUND_EVENT: Record<string, string> = {
  'provider-one': 'charge.refunded',
  'provider-two': 'order_refunded',
  'provider-three': 'order.refunded',
  'provider-four': 'adjustment.updated',
  'provider-five': 'refunds/create',
  'provider-six': 'order.updated',
};

const EACH = PROVIDER_DELIVERIES.map((d) => [d.provider, d] as const);
const WITH_EMAIL = EACH.filter(([, d]) => d.sendsEmail);

const payment = (fields: Record<string, unknown>) => expect.objectContaining({ currency: 'USD', is_free_trial: false, ...fields });

describeEachEngine('provider webhooks: the receiver', (engine) => {
  const t = useTestApp(engine);
  const h = webhookHarness(t);

  describe('each provider, from checkout to refund', () => {
    it.each(EACH)('%s: records the checkout, the renewal and the refund once each, attributed and counted in the revenue', async (provider, d: ProviderDeliveries) => {
      const { owner, website, secret } = await h.connected(provider);
      const before = await h.webhookStatus(owner.token, website.id, provider, d.hostedName);
      expect(before.webhook).toEqual({ url: `${t.config.publicUrl}${receiverUrl(d.hostedName, website.id)}`, secretSet: true, secretSetAt: expect.stringMatching(ISO_MS), lastEventAt: null, lastEventType: null, eventsReceived: 0 });
      // The address the status shows (the hosted name), and Sightline's name for the provider.
      const urls = [new URL(before.webhook.url).pathname, receiverUrl(provider, website.id)];
      const visitorId = randomUUID();
      await h.visit(website, visitorId);

      const id = nextId();
      const email = `buyer-${id}@example.com`;
      const options = { secret, id, visitorId, email, at: new Date() };
      const checkout = d.checkout({ ...options, eventId: `evt_${id}_paid` });
      const paid = await h.deliver(urls[0]!, checkout);
      expect(paid.status, paid.raw).toBe(200);
      expect(paid.body).toEqual(received(1));
      // The customer's name is not ASCII: the signature is over the bytes sent.
      const first = payment({ visitor_id: visitorId, amount_minor: 4900, renewal: false, refunded: false, email: d.sendsEmail ? email : null, customer_name: d.sendsEmail ? 'Zoë Bùyer' : null });
      expect(await h.payments(website.id)).toEqual([first]);
      expect(await h.overview(owner.token, website.id)).toEqual({ revenue: 49, payments: 1 });
      expect(await h.googleRevenue(owner.token, website.id)).toBe(49);

      const deliveries = [checkout];
      let expected = [first];
      if (d.renewal) {
        const renewalId = nextId();
        const renewal = d.renewal({ ...options, id: renewalId, eventId: `evt_${renewalId}_renewal`, at: new Date(options.at.getTime() + 1000) });
        const renewed = await h.deliver(urls[1]!, renewal);
        expect(renewed.body, renewed.raw).toEqual(received(1));
        expected = [first, payment({ visitor_id: visitorId, amount_minor: 1900, renewal: true, refunded: false })];
        expect(await h.payments(website.id)).toEqual(expected);
        expect(await h.overview(owner.token, website.id)).toEqual({ revenue: 68, payments: 2 });
        expect(await h.googleRevenue(owner.token, website.id)).toBe(68);
        deliveries.push(renewal);
      }
      const left = d.renewal ? 19 : 0;

      const refund = d.refund({ ...options, eventId: `evt_${id}_refund` });
      const refunded = await h.deliver(urls[0]!, refund);
      expect(refunded.body, refunded.raw).toEqual(received(1));
      expected = [payment({ visitor_id: visitorId, amount_minor: 4900, renewal: false, refunded: true }), ...expected.slice(1)];
      expect(await h.payments(website.id)).toEqual(expected);
      expect(await h.overview(owner.token, website.id)).toEqual({ revenue: left, payments: d.renewal ? 1 : 0 });
      expect(await h.googleRevenue(owner.token, website.id)).toBe(left);
      deliveries.push(refund);

      // Every delivery again, under either name, and the checkout as the provider redelivers it
      // (built again: Shopify's comes with a new webhook id), record nothing.
      const settled = await h.stored(website.id);
      expect(settled.events.map((e) => Number(e.payments))).toEqual(deliveries.map(() => 1));
      for (const delivery of [...deliveries, d.checkout({ ...options, eventId: `evt_${id}_paid` })]) {
        for (const url of urls) {
          const again = await h.deliver(url, delivery);
          expect(again.body, again.raw).toEqual(DUPLICATE);
        }
      }
      expect(await h.stored(website.id)).toEqual(settled);

      // Signed with another secret: 400, nothing stored, and neither secret quoted.
      const forged = await h.deliver(urls[0]!, d.forged({ ...options, id: nextId(), eventId: `evt_${id}_forged` }));
      expectError(forged, 400, /signature does not verify/);
      expect(forged.body.error.details).toEqual([{ path: 'headers', message: expect.any(String) }]);
      for (const value of [secret, FORGER_SECRET]) expect(forged.raw).not.toContain(value);
      expect(await h.stored(website.id)).toEqual(settled);

      const after = await h.webhookStatus(owner.token, website.id, provider, d.hostedName);
      expect(after.webhook).toEqual({ ...before.webhook, lastEventAt: expect.stringMatching(ISO_MS), lastEventType: REFUND_EVENT[provider], eventsReceived: deliveries.length });
      expect(Date.parse(after.webhook.lastEventAt as string)).toBeGreaterThanOrEqual(Date.parse(before.webhook.secretSetAt as string));
    });
  });

  describe("the provider's own conversion (issue 35 item 3)", () => {
    /** The providers whose webhook carries their conversion, in its documented field. */
    const CONVERTING = new Set(['provider-two', 'provider-four', 'provider-five']);

    it.each(EACH)('%s: a checkout in EUR keeps the amount the provider converted it to, and counts it in the USD website', async (provider, d: ProviderDeliveries) => {
      const { owner, website, secret } = await h.connected(provider);
      const visitorId = randomUUID();
      await h.visit(website, visitorId);
      const id = nextId();
      const delivery = d.checkout({ secret, id, visitorId, eventId: `evt_${id}_eur`, amount: 40, currency: 'EUR', converted: { amount: 43.6, currency: 'USD' } });
      const paid = await h.deliver(receiverUrl(provider, website.id), delivery);
      expect(paid.body, paid.raw).toEqual(received(1));
      const converts = CONVERTING.has(provider);
      expect(await h.payments(website.id)).toEqual([
        expect.objectContaining({ currency: 'EUR', amount_minor: 4000, converted_minor: converts ? 4360 : null, converted_currency: converts ? 'USD' : null }),
      ]);
      expect(await h.overview(owner.token, website.id)).toEqual(converts ? { revenue: 43.6, payments: 1 } : { revenue: 0, payments: 0 });
      expect(await h.googleRevenue(owner.token, website.id)).toBe(converts ? 43.6 : 0);
      const rates = await h.call('GET', `/api/v1/admin/websites/${website.id}/currency-rates`, { token: owner.token });
      expect(rates.body.unconverted, rates.raw).toEqual(converts ? [] : [{ currency: 'EUR', payments: 1, amount: 40 }]);
    });
  });

  describe('not connected (410) and bad addresses (400)', () => {
    const anyCheckout = (d: ProviderDeliveries, secret = 'whsec_never_pasted') => {
      const id = nextId();
      return d.checkout({ secret, id, eventId: `evt_${id}`, visitorId: randomUUID(), email: `c-${id}@example.com` });
    };

    it.each(EACH)('answers 410 to %s on a website where it is not connected, under either name, storing nothing', async (provider, d) => {
      const { website } = await h.ownerWithWebsite();
      for (const name of [provider, d.hostedName]) {
        expectError(await h.deliver(receiverUrl(name, website.id), anyCheckout(d)), 410, new RegExp(`^${provider} is not connected to this website$`));
      }
      expect(await h.stored(website.id)).toEqual({ payments: [], events: [], integrations: [] });
    });

    it.each(API_PROVIDERS)('answers 410 to %s connected by its credential but with no signing secret', async (provider) => {
      const { owner, website } = await h.ownerWithWebsite();
      await h.connectApi(owner.token, website.id, provider);
      const before = await h.stored(website.id);
      const response = await h.deliver(receiverUrl(provider, website.id), anyCheckout(PROVIDER_DELIVERIES.find((d) => d.provider === provider)!));
      expectError(response, 410, /has no webhook signing secret/);
      expect(await h.stored(website.id)).toEqual(before);
    });

    it.each(EACH)('answers 410 to %s once it is disconnected, its secret gone with it', async (provider, d) => {
      const { owner, website, secret } = await h.connected(provider);
      expect((await h.deliver(receiverUrl(provider, website.id), anyCheckout(d, secret))).status).toBe(200);
      const disconnected = await h.call('DELETE', `/api/v1/admin/websites/${website.id}/integrations/${provider}`, { token: owner.token });
      expect(disconnected.body.data[0].disconnected, disconnected.raw).toBe(true);
      const before = await h.stored(website.id);
      expectError(await h.deliver(receiverUrl(d.hostedName, website.id), anyCheckout(d, secret)), 410, /is not connected/);
      expect(await h.stored(website.id)).toEqual(before);
      expect(before.payments).toHaveLength(1);
    });

    it('answers 410 for a website that does not exist, under every name', async () => {
      for (const d of PROVIDER_DELIVERIES) {
        for (const name of [d.provider, d.hostedName]) expectError(await h.deliver(receiverUrl(name, UNKNOWN_ID), anyCheckout(d)), 410, /is not connected/);
      }
    });

    it('answers 400 from the schema for an unknown provider or a malformed website id', async () => {
      const { website } = await h.ownerWithWebsite();
      const delivery = anyCheckout(PROVIDER_DELIVERIES[0]!);
      for (const name of ['provider-seven', 'gumroad', 'Stripe']) expectError(await h.deliver(receiverUrl(name, website.id), delivery), 400, /^path\.provider: /);
      for (const id of ['not-an-id', UNKNOWN_ID.slice(1), `${UNKNOWN_ID}0`]) expectError(await h.deliver(receiverUrl('stripe', id), delivery), 400, /^path\.websiteId: /);
    });

    it('answers 413 for a body over 1 MiB, storing nothing', async () => {
      const { website } = await h.connected('provider-five');
      const response = await h.deliver(receiverUrl('shopify', website.id), { payload: `{"pad":"${'x'.repeat(1024 * 1024)}"}`, headers: { 'content-type': 'application/json' } });
      expectError(response, 413);
      expect((await h.stored(website.id)).events).toEqual([]);
    });
  });

  describe("WooCommerce's unsigned ping", () => {
    const ping = { payload: 'webhook_id=12', headers: { 'content-type': 'application/x-www-form-urlencoded' } };

    it('answers 200 and stores nothing, connected or not, under either name', async () => {
      const { owner, website } = await h.ownerWithWebsite();
      for (const name of ['woocommerce', 'provider-six']) expect((await h.deliver(receiverUrl(name, website.id), ping)).body).toEqual(received(0));
      expect(await h.stored(website.id)).toEqual({ payments: [], events: [], integrations: [] });

      await h.putSecret(owner.token, website.id, 'provider-six', h.secret());
      const before = await h.stored(website.id);
      expect((await h.deliver(receiverUrl('woocommerce', website.id), ping)).body).toEqual(received(0));
      expect(await h.stored(website.id)).toEqual(before);
      expect((await h.webhookStatus(owner.token, website.id, 'provider-six', 'woocommerce')).webhook).toMatchObject({ eventsReceived: 0, lastEventType: null });
    });

    it('signed, it is an event with no payment, counted once', async () => {
      const { owner, website, secret } = await h.connected('provider-six');
      const test = { payload: ping.payload, headers: { ...ping.headers, 'x-wc-webhook-topic': 'order.updated', 'x-wc-webhook-delivery-id': 'd-test', 'x-wc-webhook-signature': wooCommerceSignature(ping.payload, secret) } };
      for (const expected of [received(0), DUPLICATE]) expect((await h.deliver(receiverUrl('woocommerce', website.id), test)).body).toEqual(expected);
      expect((await h.webhookStatus(owner.token, website.id, 'provider-six', 'woocommerce')).webhook).toMatchObject({ eventsReceived: 1, lastEventType: 'order.updated' });
      expect((await h.stored(website.id)).payments).toEqual([]);
    });

    it('is no ping to another provider, nor with anything more in it', async () => {
      const { website } = await h.connected('provider-six');
      expectError(await h.deliver(receiverUrl('woocommerce', website.id), { ...ping, payload: 'webhook_id=12&status=paid' }), 400, /X-WC-Webhook-Signature header is missing/);
      expectError(await h.deliver(receiverUrl('shopify', website.id), ping), 410);
      expect((await h.stored(website.id)).events).toEqual([]);
    });
  });

  describe('attribution by the customer e-mail', () => {
    it.each(WITH_EMAIL)('%s: a payment without a visitor id goes to the identified visitor with its e-mail, else stays unattributed', async (provider, d) => {
      const { owner, website, secret } = await h.connected(provider);
      const key = (await createApiKey(t, owner.token, website.id)).key;
      const [byUserId, byField] = [randomUUID(), randomUUID()];
      const id = nextId();
      const [mailA, mailB] = [`ada-${id}@example.com`, `bob-${id}@example.com`];
      for (const [visitorId, body] of [
        [byUserId, { user_id: mailA, name: 'Ada' }],
        [byField, { user_id: `user-${id}`, email: mailB.toUpperCase() }],
      ] as const) {
        await h.visit(website, visitorId);
        const identified = await h.call('POST', '/api/v1/identify', { token: key, body: { datafast_visitor_id: visitorId, ...body } });
        expect(identified.status, identified.raw).toBe(200);
      }
      const sends = [
        { email: mailA.replace('ada', 'Ada'), amount: 10 },
        { email: mailB, amount: 20 },
        { email: `nobody-${id}@example.com`, amount: 30 },
      ];
      for (const [i, { email, amount }] of sends.entries()) {
        const orderId = nextId();
        const response = await h.deliver(receiverUrl(provider, website.id), d.checkout({ secret, id: orderId, eventId: `evt_${orderId}`, email, amount, at: new Date(Date.now() + i) }));
        expect(response.body, response.raw).toEqual(received(1));
      }
      const rows = await h.payments(website.id);
      expect(rows.map((r) => [r.amount_minor, r.visitor_id, r.email])).toEqual([
        [1000, byUserId, mailA],
        [2000, byField, mailB],
        [3000, null, `nobody-${id}@example.com`],
      ]);
      // The e-mail matches a profile of another website only: that is no match here.
      const elsewhere = await createWebsite(t, owner.token);
      const stranger = randomUUID();
      await h.visit(elsewhere as typeof website, stranger);
      const elsewhereKey = (await createApiKey(t, owner.token, elsewhere.id)).key;
      expect((await h.call('POST', '/api/v1/identify', { token: elsewhereKey, body: { datafast_visitor_id: stranger, user_id: `nobody-${id}@example.com` } })).status).toBe(200);
      const orderId = nextId();
      expect((await h.deliver(receiverUrl(provider, website.id), d.checkout({ secret, id: orderId, eventId: `evt_${orderId}`, email: `nobody-${id}@example.com`, amount: 40 }))).body).toEqual(received(1));
      expect((await h.payments(website.id)).map((r) => r.visitor_id)).toEqual([byUserId, byField, null, null]);
      // The unattributed payments still count in the website's revenue; the referrer breakdown has the attributed ones.
      expect(await h.overview(owner.token, website.id)).toEqual({ revenue: 100, payments: 4 });
      expect(await h.googleRevenue(owner.token, website.id)).toBe(30);
    });
  });

  describe('payments the writer refuses', () => {
    it.each(EACH)('%s: a payment in a currency Sightline does not know is skipped, the event still remembered', async (provider, d) => {
      const { owner, website, secret } = await h.connected(provider);
      const id = nextId();
      const response = await h.deliver(receiverUrl(provider, website.id), d.checkout({ secret, id, eventId: `evt_${id}`, visitorId: randomUUID(), currency: 'XYZ' }));
      expect(response.body, response.raw).toEqual({ received: true, duplicate: false, payments: 0, skipped: 1 });
      const { payments, events } = await h.stored(website.id);
      expect([payments, events.map((e) => Number(e.payments))]).toEqual([[], [0]]);
      expect((await h.webhookStatus(owner.token, website.id, provider, d.hostedName)).webhook.eventsReceived).toBe(1);
    });

    it.each(WITH_EMAIL)('%s: a customer e-mail the writer would refuse is left out, not the payment', async (provider, d) => {
      const { website, secret } = await h.connected(provider);
      const visitorId = randomUUID();
      const id = nextId();
      // An internationalised address (RFC 6531): the providers take it, Sightline's e-mail rule does not.
      const response = await h.deliver(receiverUrl(provider, website.id), d.checkout({ secret, id, eventId: `evt_${id}`, visitorId, email: `zoë-${id}@example.com` }));
      expect(response.body, response.raw).toEqual(received(1));
      expect(await h.payments(website.id)).toEqual([payment({ visitor_id: visitorId, amount_minor: 4900, email: null })]);
    });
  });

  describe('redelivery and crashes', () => {
    it.each(EACH)('%s: the same event delivered three times at once is recorded and counted once', async (provider, d) => {
      const { owner, website, secret } = await h.connected(provider);
      const id = nextId();
      const delivery = d.checkout({ secret, id, eventId: `evt_${id}`, visitorId: randomUUID(), email: `c-${id}@example.com` });
      const answers = await Promise.all([provider, d.hostedName, provider].map((name) => h.deliver(receiverUrl(name, website.id), delivery)));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
      expect(answers.map((a) => a.body).sort((a, b) => Number(a.duplicate) - Number(b.duplicate))).toEqual([received(1), DUPLICATE, DUPLICATE]);
      expect(await h.payments(website.id)).toHaveLength(1);
      expect(await h.rememberedEvents(website.id)).toHaveLength(1);
      expect((await h.webhookStatus(owner.token, website.id, provider, d.hostedName)).webhook.eventsReceived).toBe(1);
    });

    it('a delivery whose payments were recorded before a crash, but not the event, is recorded again without a second payment', async () => {
      const d = PROVIDER_DELIVERIES[0]!;
      const { owner, website, secret } = await h.connected(d.provider);
      const id = nextId();
      const delivery = d.checkout({ secret, id, eventId: `evt_${id}`, visitorId: randomUUID() });
      expect((await h.deliver(receiverUrl(d.provider, website.id), delivery)).body).toEqual(received(1));
      const before = await h.stored(website.id);
      // The state a crash between the payments and remembering the event leaves: the payment alone.
      await t.db.transaction().execute(async (trx) => {
        await trx.deleteFrom('integration_webhook_events').where('website_id', '=', website.id).execute();
        await trx
          .updateTable('integrations')
          .set({ webhooks_received: 0, last_webhook_at: null, last_webhook_type: null })
          .where('website_id', '=', website.id)
          .where('provider', '=', d.provider)
          .execute();
      });
      const redelivered = await h.deliver(receiverUrl(d.provider, website.id), delivery);
      expect(redelivered.body).toEqual(received(1)); // handed to the writer, which keeps the transaction once
      expect(await h.payments(website.id)).toEqual(before.payments);
      expect((await h.rememberedEvents(website.id)).map((e) => e.event_id)).toEqual([`evt_${id}`]);
      expect((await h.webhookStatus(owner.token, website.id, d.provider, d.hostedName)).webhook.eventsReceived).toBe(1);
    });
  });

  it('never returned or logged a signing secret', () => {
    expectNoSecretLeaked(t, h, [FORGER_SECRET]);
  });
});
