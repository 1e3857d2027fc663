import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PERMISSIONS } from '../src/auth/permissions.ts';
import type { NewEvent } from '../src/modules/events/event.types.ts';
import { type TestApp, useTestApp } from './helpers/app.ts';
import { describeEachEventEngine } from './helpers/clickhouse.ts';
import {
  UNKNOWN_ID,
  addMember,
  createAccount,
  createApiKey,
  createToken,
  createWebsite,
  expectError,
  newEvent,
} from './helpers/factories.ts';

const GOALS = '/api/v1/goals';
const PAYMENTS = '/api/v1/payments';
const ID = /^[0-9a-f]{24}$/;
const json = { 'content-type': 'application/json' };

/** Every permission but one, so a refusal can only come from the one left out. */
const allBut = (permission: string) => PERMISSIONS.filter((p) => p !== permission);
const visitor = () => `visitor-${randomBytes(6).toString('hex')}`;
const transaction = () => `txn_${randomBytes(6).toString('hex')}`;

function pageview(websiteId: string, visitorId: string, overrides: Partial<NewEvent> = {}): NewEvent {
  return newEvent(websiteId, visitorId, {
    hostname: 'shop.example.com',
    path: '/pricing',
    country: 'DE',
    browser: 'Firefox',
    os: 'Linux',
    device: 'desktop',
    occurredAt: new Date(Date.now() - 60_000).toISOString(),
    ...overrides,
  });
}

describeEachEventEngine('server-side goals and payments', (engine) => {
  const t: TestApp = useTestApp(engine);

  /** An owner's website whose visitor has a pageview, and a df_ key of the website. */
  async function seeded() {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const apiKey = await createApiKey(t, owner.token, website.id);
    const visitorId = visitor();
    await t.app.events.write([pageview(website.id, visitorId)]);
    return { owner, website, key: apiKey.key, visitorId };
  }

  const goalsOf = async (websiteId: string) => (await t.storedEvents(websiteId)).filter((event) => event.type === 'custom');
  const paymentsOf = (websiteId: string) => t.db.selectFrom('payments').selectAll().where('website_id', '=', websiteId).execute();

  describe('POST /api/v1/goals', () => {
    it('records a goal with the website df_ key and no websiteId, answering its event id in the envelope', async () => {
      const { website, key, visitorId } = await seeded();
      const response = await t.request('POST', GOALS, {
        token: key,
        body: { datafast_visitor_id: visitorId, name: 'signup', metadata: { plan: 'pro', 'utm-source': 'newsletter' } },
      });
      expect(response.status, response.raw).toBe(200);
      expect(response.body).toEqual({ status: 'success', data: [{ message: 'Goal "signup" recorded', eventId: expect.stringMatching(ID) }] });

      const [stored, ...more] = await goalsOf(website.id);
      expect(more).toEqual([]);
      expect(stored).toMatchObject({
        id: response.body.data[0].eventId,
        type: 'custom',
        name: 'signup',
        visitor_id: visitorId,
        source: 'api',
        session_id: null,
        path: null,
        // The device and place of the visitor's latest pageview.
        hostname: 'shop.example.com',
        country: 'DE',
        browser: 'Firefox',
        os: 'Linux',
        device: 'desktop',
      });
      expect(JSON.parse(stored!.metadata!)).toEqual({ plan: 'pro', 'utm-source': 'newsletter' });
      expect(Date.parse(stored!.occurred_at)).toBeGreaterThan(Date.now() - 60_000);
    });

    it('accepts an account token with goals:write and ?websiteId=, and the visitorId alias', async () => {
      const { owner, website, visitorId } = await seeded();
      const token = await createToken(t, owner, ['goals:write'], [website.id]);
      const response = await t.request('POST', `${GOALS}?websiteId=${website.id}`, { token, body: { visitorId, name: 'checkout:done' } });
      expect(response.status, response.raw).toBe(200);
      const stored = await goalsOf(website.id);
      expect(stored.map((e) => [e.name, e.visitor_id, e.metadata])).toEqual([['checkout:done', visitorId, null]]);
    });

    it("accepts the website's trackingId as websiteId, for goals and payments", async () => {
      const { owner, website, visitorId } = await seeded();
      const goal = await t.request('POST', `${GOALS}?websiteId=${website.trackingId}`, { token: owner.token, body: { visitorId, name: 'signup' } });
      expect(goal.status, goal.raw).toBe(200);
      const body = { amount: 1, currency: 'USD', transaction_id: transaction() };
      const paid = await t.request('POST', `${PAYMENTS}?websiteId=${website.trackingId}`, { token: owner.token, body });
      expect(paid.status, paid.raw).toBe(200);
      expect(await goalsOf(website.id)).toHaveLength(1);
      expect(await paymentsOf(website.id)).toHaveLength(1);
    });

    it('accepts the df_ key with its own website id in the query', async () => {
      const { website, key, visitorId } = await seeded();
      const response = await t.request('POST', `${GOALS}?websiteId=${website.id}`, { token: key, body: { visitorId, name: 'signup' } });
      expect(response.status, response.raw).toBe(200);
      expect(await goalsOf(website.id)).toHaveLength(1);
    });

    it('feeds the tracked-goals rollup: completions and distinct visitors', async () => {
      const { website, key, visitorId } = await seeded();
      const other = visitor();
      await t.app.events.write([pageview(website.id, other)]);
      for (const id of [visitorId, visitorId, other]) {
        expect((await t.request('POST', GOALS, { token: key, body: { visitorId: id, name: 'signup' } })).status).toBe(200);
      }
      const stats = await t.db.selectFrom('goal_stats').selectAll().where('website_id', '=', website.id).execute();
      expect(stats).toEqual([expect.objectContaining({ goal_name: 'signup', completions: 3, visitors: 2 })]);
    });

    it('answers 401 without a credential and with an unknown one, and records nothing', async () => {
      const { website, visitorId } = await seeded();
      const body = { visitorId, name: 'signup' };
      const missing = await t.request('POST', `${GOALS}?websiteId=${website.id}`, { body });
      expectError(missing, 401);
      expect(String(missing.headers['www-authenticate'])).toMatch(/^Bearer/);
      expectError(await t.request('POST', `${GOALS}?websiteId=${website.id}`, { token: 'dft_nope', body }), 401);
      expect(await goalsOf(website.id)).toEqual([]);
    });

    it('answers 403 for a token without goals:write, a token limited to another website, a viewer and a df_ key of another website', async () => {
      const { owner, website, visitorId } = await seeded();
      const body = { visitorId, name: 'signup' };
      const url = `${GOALS}?websiteId=${website.id}`;
      expectError(await t.request('POST', url, { token: await createToken(t, owner, allBut('goals:write')), body }), 403, /goals:write/);

      const otherSite = await createWebsite(t, owner.token);
      expectError(await t.request('POST', url, { token: await createToken(t, owner, ['goals:write'], [otherSite.id]), body }), 403, /not allowed/);

      const viewer = await createAccount(t);
      await addMember(t, website.id, viewer.id, 'viewer');
      expectError(await t.request('POST', url, { token: viewer.token, body }), 403, /viewer/);

      const otherKey = await createApiKey(t, owner.token, otherSite.id);
      expectError(await t.request('POST', url, { token: otherKey.key, body }), 403, /another website/);
      expect(await goalsOf(website.id)).toEqual([]);
    });

    it('lets a member record goals', async () => {
      const { website, visitorId } = await seeded();
      const member = await createAccount(t);
      await addMember(t, website.id, member.id, 'member');
      const response = await t.request('POST', `${GOALS}?websiteId=${website.id}`, { token: member.token, body: { visitorId, name: 'signup' } });
      expect(response.status, response.raw).toBe(200);
    });

    it("answers 404 for another account's website and for an unknown website, even with a bad body", async () => {
      const { website, visitorId } = await seeded();
      const stranger = await createAccount(t);
      expectError(await t.request('POST', `${GOALS}?websiteId=${website.id}`, { token: stranger.token, body: { visitorId, name: 'signup' } }), 404);
      expectError(await t.request('POST', `${GOALS}?websiteId=${website.id}`, { token: stranger.token, body: { nope: 1 } }), 404);
      expectError(await t.request('POST', `${GOALS}?websiteId=${UNKNOWN_ID}`, { token: stranger.token, body: { visitorId, name: 'signup' } }), 404);
      expect(await goalsOf(website.id)).toEqual([]);
    });

    it('answers 404 for a visitor without a pageview on the website, and records nothing', async () => {
      const { owner, website, key } = await seeded();
      expectError(await t.request('POST', GOALS, { token: key, body: { visitorId: visitor(), name: 'signup' } }), 404, /no pageview/);

      // A pageview on another website does not count, nor does a goal on this one.
      const elsewhere = visitor();
      const otherSite = await createWebsite(t, owner.token);
      await t.app.events.write([
        pageview(otherSite.id, elsewhere),
        pageview(website.id, elsewhere, { type: 'custom', name: 'browser_goal', path: null }),
      ]);
      expectError(await t.request('POST', GOALS, { token: key, body: { visitorId: elsewhere, name: 'signup' } }), 404, /no pageview/);
      const stored = await goalsOf(website.id);
      expect(stored.map((e) => e.name)).toEqual(['browser_goal']);
    });

    it('answers 400 naming the website id when an account token leaves it out or sends a bad one', async () => {
      const { owner, website, visitorId } = await seeded();
      expectError(await t.request('POST', GOALS, { token: owner.token, body: { visitorId, name: 'signup' } }), 400, /query\.websiteId: is required/);
      expectError(await t.request('POST', `${GOALS}?websiteId=nope`, { token: owner.token, body: { visitorId, name: 'signup' } }), 400, /query\.websiteId/);
      expect(await goalsOf(website.id)).toEqual([]);
    });

    const badBodies: [string, (visitorId: string) => unknown, RegExp][] = [
      ['no name', (v) => ({ visitorId: v }), /body\.name: is required/],
      ['a name with a dot after normalising', (v) => ({ visitorId: v, name: 'Sign.Up' }), /body\.name: after normalising/],
      ['a name of only white space', (v) => ({ visitorId: v, name: '   ' }), /body\.name: after normalising/],
      ['an empty name', (v) => ({ visitorId: v, name: '' }), /body\.name/],
      ['the name " Identify " (normalised to identify)', (v) => ({ visitorId: v, name: ' Identify ' }), /body\.name/],
      ['the name "identify"', (v) => ({ visitorId: v, name: 'identify' }), /body\.name/],
      ['a name of 65 characters', (v) => ({ visitorId: v, name: 'a'.repeat(65) }), /body\.name/],
      ['a name of 65 characters once normalised', (v) => ({ visitorId: v, name: ` ${'A'.repeat(65)} ` }), /body\.name/],
      ['a description of 301 characters', (v) => ({ visitorId: v, name: 'signup', description: 'd'.repeat(301) }), /body\.description/],
      ['a description that is a number', (v) => ({ visitorId: v, name: 'signup', description: 3 }), /body\.description/],
      ['no visitor id', () => ({ name: 'signup' }), /body\.datafast_visitor_id: is required/],
      ['both visitor id fields', (v) => ({ datafast_visitor_id: v, visitorId: v, name: 'signup' }), /not both/],
      ['an empty visitor id', () => ({ visitorId: '', name: 'signup' }), /body\.visitorId/],
      ['a visitor id that is a number', () => ({ datafast_visitor_id: 42, name: 'signup' }), /body\.datafast_visitor_id: must be string/],
      ['a visitor id of 256 characters', () => ({ visitorId: 'v'.repeat(256), name: 'signup' }), /body\.visitorId/],
      [
        'metadata with 11 keys',
        (v) => ({ visitorId: v, name: 'signup', metadata: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, 'x'])) }),
        /body\.metadata: must NOT have more than 10 properties/,
      ],
      ['a metadata key with upper case', (v) => ({ visitorId: v, name: 'signup', metadata: { Plan: 'pro' } }), /body\.metadata: keys must be/],
      ['a metadata key with a dot', (v) => ({ visitorId: v, name: 'signup', metadata: { 'a.b': 'pro' } }), /body\.metadata: keys must be/],
      ['an empty metadata key', (v) => ({ visitorId: v, name: 'signup', metadata: { '': 'pro' } }), /body\.metadata: keys must be/],
      ['a metadata key of 65 characters', (v) => ({ visitorId: v, name: 'signup', metadata: { ['k'.repeat(65)]: 'x' } }), /body\.metadata: keys must be/],
      ['a metadata value of 256 characters', (v) => ({ visitorId: v, name: 'signup', metadata: { plan: 'x'.repeat(256) } }), /body\.metadata\.plan/],
      ['a metadata value that is an object', (v) => ({ visitorId: v, name: 'signup', metadata: { price: { usd: 9 } } }), /body\.metadata\.price: must be string or number or boolean/],
      ['a metadata value that is null', (v) => ({ visitorId: v, name: 'signup', metadata: { price: null } }), /body\.metadata\.price: must be string or number or boolean/],
      ['a metadata value that is a list', (v) => ({ visitorId: v, name: 'signup', metadata: { tags: ['a'] } }), /body\.metadata\.tags/],
      ['metadata that is a list', (v) => ({ visitorId: v, name: 'signup', metadata: ['x'] }), /body\.metadata/],
      ['an unknown field', (v) => ({ visitorId: v, name: 'signup', value: 3 }), /body\.value: is not an allowed field/],
    ];
    for (const [label, body, pattern] of badBodies) {
      it(`answers 400 for ${label}, and records nothing`, async () => {
        const { website, key, visitorId } = await seeded();
        expectError(await t.request('POST', GOALS, { token: key, body: body(visitorId) }), 400, pattern);
        expect(await goalsOf(website.id)).toEqual([]);
        expect(await t.db.selectFrom('goal_stats').selectAll().where('website_id', '=', website.id).execute()).toEqual([]);
      });
    }

    it('accepts 10 metadata keys of 64 characters with values of 255, and null metadata', async () => {
      const { website, key, visitorId } = await seeded();
      const metadata = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`${i}`.padEnd(64, 'k'), 'v'.repeat(255)]));
      expect((await t.request('POST', GOALS, { token: key, body: { visitorId, name: 'a', metadata } })).status).toBe(200);
      expect((await t.request('POST', GOALS, { token: key, body: { visitorId, name: 'b', metadata: null } })).status).toBe(200);
      const stored = await goalsOf(website.id);
      const byName = Object.fromEntries(stored.map((e) => [e.name, e.metadata]));
      expect(JSON.parse(byName.a!)).toEqual(metadata);
      expect(byName.b).toBeNull();
    });

    it('normalises the goal name as the hosted service does (trimmed, lower case, white space to _) before the rules', async () => {
      const { website, key, visitorId } = await seeded();
      const response = await t.request('POST', GOALS, { token: key, body: { visitorId, name: '  Sign Up\tNow ' } });
      expect(response.status, response.raw).toBe(200);
      expect(response.body.data[0].message).toBe('Goal "sign_up_now" recorded');
      expect((await goalsOf(website.id)).map((e) => e.name)).toEqual(['sign_up_now']);
      const tracked = await t.request('GET', `/api/v1/admin/websites/${website.id}/goals`, { token: key });
      expect(tracked.body.data.map((g: { goalName: string }) => g.goalName)).toEqual(['sign_up_now']);
    });

    it('stores the description, and null or no description as null', async () => {
      const { website, key, visitorId } = await seeded();
      const description = 'é'.repeat(300);
      for (const body of [{ name: 'a', description }, { name: 'b', description: null }, { name: 'c' }]) {
        const response = await t.request('POST', GOALS, { token: key, body: { visitorId, ...body } });
        expect(response.status, response.raw).toBe(200);
      }
      const byName = Object.fromEntries((await goalsOf(website.id)).map((e) => [e.name, e.description]));
      expect(byName).toEqual({ a: description, b: null, c: null });
    });

    it('stores metadata numbers and booleans as strings', async () => {
      const { website, key, visitorId } = await seeded();
      const metadata = { price: 9.5, count: 0, big: 1e21, trial: true, paid: false, plan: 'pro' };
      const response = await t.request('POST', GOALS, { token: key, body: { visitorId, name: 'signup', metadata } });
      expect(response.status, response.raw).toBe(200);
      const [stored] = await goalsOf(website.id);
      expect(JSON.parse(stored!.metadata!)).toEqual({ price: '9.5', count: '0', big: '1e+21', trial: 'true', paid: 'false', plan: 'pro' });
    });

    it('answers 400 for malformed JSON and 415 for another content type', async () => {
      const { key } = await seeded();
      expectError(await t.request('POST', GOALS, { token: key, payload: '{"name":', headers: json }), 400, /not valid JSON/);
      expectError(await t.request('POST', GOALS, { token: key, payload: 'name=signup', headers: { 'content-type': 'text/plain' } }), 415);
    });
  });

  describe('POST /api/v1/payments', () => {
    const payment = (overrides: Record<string, unknown> = {}) => ({ amount: 29.99, currency: 'USD', transaction_id: transaction(), ...overrides });

    it('records a payment with the df_ key, answering {message, transaction_id} without the envelope', async () => {
      const { website, key, visitorId } = await seeded();
      const body = payment({ datafast_visitor_id: visitorId, email: 'Buyer@Example.com', renewal: true, timestamp: '2026-05-01T12:30:00+02:00' });
      const response = await t.request('POST', PAYMENTS, { token: key, body });
      expect(response.status, response.raw).toBe(200);
      expect(response.body).toEqual({ message: 'Payment recorded', transaction_id: body.transaction_id });

      const rows = await paymentsOf(website.id);
      expect(rows).toHaveLength(1);
      const row = rows[0]!;
      expect(row).toMatchObject({
        id: expect.stringMatching(ID),
        transaction_id: body.transaction_id,
        amount_minor: 2999,
        currency: 'USD',
        visitor_id: visitorId,
        email: 'buyer@example.com',
        occurred_at: '2026-05-01T10:30:00.000Z',
      });
      expect(Boolean(row.renewal)).toBe(true);
      expect(Boolean(row.refunded)).toBe(false);
      // The payments table is the one record of a payment: no event is written for it.
      expect((await t.storedEvents(website.id)).filter((event) => event.type === 'payment')).toEqual([]);
    });

    it('records a payment that names no visitor, dated now, with an account token and ?websiteId=', async () => {
      const { owner, website } = await seeded();
      const token = await createToken(t, owner, ['payments:write'], [website.id]);
      const body = payment({ amount: 5 });
      const response = await t.request('POST', `${PAYMENTS}?websiteId=${website.id}`, { token, body });
      expect(response.status, response.raw).toBe(200);
      const [row] = await paymentsOf(website.id);
      expect(row).toMatchObject({ amount_minor: 500, visitor_id: null, email: null });
      expect(Boolean(row!.renewal)).toBe(false);
      expect(Math.abs(Date.parse(row!.occurred_at) - Date.now())).toBeLessThan(60_000);
    });

    it('accepts the timestamp as epoch milliseconds', async () => {
      const { website, key } = await seeded();
      const at = Date.UTC(2026, 0, 15, 8, 0, 0, 123);
      expect((await t.request('POST', PAYMENTS, { token: key, body: payment({ timestamp: at }) })).status).toBe(200);
      const [row] = await paymentsOf(website.id);
      expect(row!.occurred_at).toBe('2026-01-15T08:00:00.123Z');
    });

    it("stores amounts exactly in the currency's minor unit", async () => {
      const { website, key } = await seeded();
      const cases: [number, string, number, string][] = [
        [19.99, 'USD', 1999, 'USD'],
        [0.3, 'eur', 30, 'EUR'],
        [0.01, 'USD', 1, 'USD'],
        [1099.1, 'USD', 109910, 'USD'],
        [1500, 'JPY', 1500, 'JPY'],
        [1.234, 'KWD', 1234, 'KWD'],
        [1_000_000_000_000, 'USD', 100_000_000_000_000, 'USD'],
      ];
      for (const [amount, currency] of cases) {
        const response = await t.request('POST', PAYMENTS, { token: key, body: payment({ amount, currency, transaction_id: `${amount}-${currency}` }) });
        expect(response.status, response.raw).toBe(200);
      }
      const rows = await paymentsOf(website.id);
      const stored = Object.fromEntries(rows.map((row) => [row.transaction_id, [row.amount_minor, row.currency]]));
      for (const [amount, currency, minor, code] of cases) expect(stored[`${amount}-${currency}`]).toEqual([minor, code]);
    });

    it('stores the customer fields, the free-trial flag and an amount of 0', async () => {
      const { website, key, visitorId } = await seeded();
      const body = payment({
        amount: 0,
        datafast_visitor_id: visitorId,
        customer_id: 'cus_42',
        customer_name: 'Ada Lovelace',
        customer_email: 'Ada@Example.com',
        is_free_trial: true,
      });
      const response = await t.request('POST', PAYMENTS, { token: key, body });
      expect(response.status, response.raw).toBe(200);
      const [row] = await paymentsOf(website.id);
      expect(row).toMatchObject({ amount_minor: 0, customer_id: 'cus_42', customer_name: 'Ada Lovelace', email: 'ada@example.com' });
      expect(Boolean(row!.is_free_trial)).toBe(true);
    });

    it('accepts name for customer_name and both spellings when they agree; leaves the new fields null or false when left out', async () => {
      const { website, key } = await seeded();
      const first = payment({ name: 'Grace Hopper' });
      const second = payment({ name: 'Ada', customer_name: 'Ada', email: 'a@example.com', customer_email: 'a@example.com' });
      const third = payment({ amount: 0, renewal: true });
      for (const body of [first, second, third]) expect((await t.request('POST', PAYMENTS, { token: key, body })).status).toBe(200);
      const rows = Object.fromEntries((await paymentsOf(website.id)).map((row) => [row.transaction_id, row]));
      expect(rows[first.transaction_id]).toMatchObject({ customer_name: 'Grace Hopper', customer_id: null });
      expect(rows[second.transaction_id]).toMatchObject({ customer_name: 'Ada', email: 'a@example.com' });
      expect(rows[third.transaction_id]).toMatchObject({ customer_name: null, customer_id: null, email: null, amount_minor: 0 });
      expect(Boolean(rows[third.transaction_id]!.is_free_trial)).toBe(false);
    });

    it('records the same transaction_id once, answering success both times', async () => {
      const { website, key } = await seeded();
      const body = payment();
      const first = await t.request('POST', PAYMENTS, { token: key, body });
      expect(first.body).toEqual({ message: 'Payment recorded', transaction_id: body.transaction_id });
      const second = await t.request('POST', PAYMENTS, { token: key, body: { ...body, amount: 99 } });
      expect(second.status, second.raw).toBe(200);
      expect(second.body).toEqual({ message: 'Payment already recorded; nothing changed', transaction_id: body.transaction_id });
      const rows = await paymentsOf(website.id);
      expect(rows.map((row) => [row.transaction_id, row.amount_minor])).toEqual([[body.transaction_id, 2999]]);
    });

    it('records one payment when the same transaction arrives twice at once', async () => {
      const { website, key } = await seeded();
      const body = payment();
      const responses = await Promise.all([1, 2, 3].map(() => t.request('POST', PAYMENTS, { token: key, body })));
      expect(responses.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(responses.filter((r) => r.body.message === 'Payment recorded')).toHaveLength(1);
      expect(await paymentsOf(website.id)).toHaveLength(1);
    });

    it('keeps transaction ids per website', async () => {
      const { owner, website, key } = await seeded();
      const otherSite = await createWebsite(t, owner.token);
      const body = payment();
      expect((await t.request('POST', PAYMENTS, { token: key, body })).body.message).toBe('Payment recorded');
      const other = await t.request('POST', `${PAYMENTS}?websiteId=${otherSite.id}`, { token: owner.token, body });
      expect(other.body.message).toBe('Payment recorded');
      expect(await paymentsOf(website.id)).toHaveLength(1);
      expect(await paymentsOf(otherSite.id)).toHaveLength(1);
    });

    it('marks a recorded payment refunded when the transaction comes again with refunded: true, and never un-refunds it', async () => {
      const { website, key } = await seeded();
      const body = payment();
      await t.request('POST', PAYMENTS, { token: key, body });
      const refund = await t.request('POST', PAYMENTS, { token: key, body: { ...body, refunded: true } });
      expect(refund.status, refund.raw).toBe(200);
      expect(refund.body).toEqual({ message: 'Payment already recorded; now marked as refunded', transaction_id: body.transaction_id });
      expect(Boolean((await paymentsOf(website.id))[0]!.refunded)).toBe(true);

      const again = await t.request('POST', PAYMENTS, { token: key, body: { ...body, refunded: true } });
      expect(again.body.message).toBe('Payment already recorded and refunded; nothing changed');
      const undo = await t.request('POST', PAYMENTS, { token: key, body: { ...body, refunded: false } });
      expect(undo.body.message).toBe('Payment already recorded; nothing changed');
      const rows = await paymentsOf(website.id);
      expect(rows).toHaveLength(1);
      expect(Boolean(rows[0]!.refunded)).toBe(true);
    });

    it('records a payment first sent as refunded as refunded', async () => {
      const { website, key } = await seeded();
      const response = await t.request('POST', PAYMENTS, { token: key, body: payment({ refunded: true }) });
      expect(response.body.message).toBe('Payment recorded as refunded');
      expect(Boolean((await paymentsOf(website.id))[0]!.refunded)).toBe(true);
    });

    it('answers errors in the error envelope, 401 without a credential', async () => {
      const { website } = await seeded();
      const response = await t.request('POST', `${PAYMENTS}?websiteId=${website.id}`, { body: payment() });
      expectError(response, 401);
      expect(String(response.headers['www-authenticate'])).toMatch(/^Bearer/);
      expect(await paymentsOf(website.id)).toEqual([]);
    });

    it('answers 403 for a token without payments:write, a token limited to another website, a viewer and a df_ key of another website', async () => {
      const { owner, website } = await seeded();
      const url = `${PAYMENTS}?websiteId=${website.id}`;
      expectError(await t.request('POST', url, { token: await createToken(t, owner, allBut('payments:write')), body: payment() }), 403, /payments:write/);
      const otherSite = await createWebsite(t, owner.token);
      expectError(
        await t.request('POST', url, { token: await createToken(t, owner, ['payments:write'], [otherSite.id]), body: payment() }),
        403,
        /not allowed/,
      );
      const viewer = await createAccount(t);
      await addMember(t, website.id, viewer.id, 'viewer');
      expectError(await t.request('POST', url, { token: viewer.token, body: payment() }), 403, /viewer/);
      const otherKey = await createApiKey(t, owner.token, otherSite.id);
      expectError(await t.request('POST', url, { token: otherKey.key, body: payment() }), 403, /another website/);
      expect(await paymentsOf(website.id)).toEqual([]);
    });

    it("answers 404 for another account's website, before looking at the body", async () => {
      const { website } = await seeded();
      const stranger = await createAccount(t);
      expectError(await t.request('POST', `${PAYMENTS}?websiteId=${website.id}`, { token: stranger.token, body: payment() }), 404);
      expectError(await t.request('POST', `${PAYMENTS}?websiteId=${website.id}`, { token: stranger.token, body: { amount: -1 } }), 404);
      expect(await paymentsOf(website.id)).toEqual([]);
    });

    it('answers 400 naming the website id when an account token leaves it out', async () => {
      const { owner, website } = await seeded();
      expectError(await t.request('POST', PAYMENTS, { token: owner.token, body: payment() }), 400, /query\.websiteId: is required/);
      expect(await paymentsOf(website.id)).toEqual([]);
    });

    const badPayments: [string, Record<string, unknown>, RegExp][] = [
      ['no amount', { amount: undefined }, /body\.amount: is required/],
      ['a negative amount', { amount: -5 }, /body\.amount: must be >= 0/],
      ['an amount as a string', { amount: '29.99' }, /body\.amount: must be number/],
      ['an amount above the maximum', { amount: 1_000_000_000_001 }, /body\.amount/],
      ['three decimals in USD', { amount: 29.999 }, /body\.amount: has more decimals than USD has \(at most 2 decimal places\)/],
      ['decimals in JPY', { amount: 1500.5, currency: 'JPY' }, /body\.amount: has more decimals than JPY has \(no decimals\)/],
      ['four decimals in KWD', { amount: 1.2345, currency: 'KWD' }, /body\.amount: .*at most 3 decimal places/],
      ['a tiny amount in exponent form', { amount: 1e-7 }, /body\.amount: has more decimals/],
      ['no currency', { currency: undefined }, /body\.currency: is required/],
      ['an unknown currency', { currency: 'XYZ' }, /body\.currency: must be an ISO-4217/],
      ['a two-letter currency', { currency: 'US' }, /body\.currency/],
      ['no transaction_id', { transaction_id: undefined }, /body\.transaction_id: is required/],
      ['an empty transaction_id', { transaction_id: '' }, /body\.transaction_id/],
      ['a transaction_id of 256 characters', { transaction_id: 't'.repeat(256) }, /body\.transaction_id/],
      ['a transaction_id that is a number', { transaction_id: 123 }, /body\.transaction_id: must be string/],
      ['a bad email', { email: 'not-an-email' }, /body\.email: must be an e-mail address/],
      ['an empty visitor id', { datafast_visitor_id: '' }, /body\.datafast_visitor_id/],
      ['renewal that is not a boolean', { renewal: 'yes' }, /body\.renewal: must be boolean/],
      ['refunded that is not a boolean', { refunded: 1 }, /body\.refunded: must be boolean/],
      ['a timestamp without a time zone', { timestamp: '2026-05-01T12:00:00' }, /body\.timestamp/],
      ['a timestamp that is not a date', { timestamp: 'yesterday' }, /body\.timestamp/],
      ['a timestamp in epoch seconds', { timestamp: 1_770_000_000 }, /body\.timestamp: must be between 2000-01-01/],
      ['a timestamp a day in the future', { timestamp: new Date(Date.now() + 86_400_000).toISOString() }, /body\.timestamp: must be between/],
      ['a fractional epoch timestamp', { timestamp: 1_770_000_000_000.5 }, /body\.timestamp/],
      ['an unknown field', { coupon: 'SPRING' }, /body\.coupon: is not an allowed field/],
      ['name and customer_name that differ', { name: 'Ada', customer_name: 'Grace' }, /body\.name: is another spelling of customer_name/],
      ['email and customer_email that differ', { email: 'a@example.com', customer_email: 'b@example.com' }, /body\.customer_email: is another spelling of email/],
      ['a bad customer_email', { customer_email: 'nope' }, /body\.customer_email: must be an e-mail address/],
      ['is_free_trial that is not a boolean', { is_free_trial: 'yes' }, /body\.is_free_trial: must be boolean/],
      ['an empty customer_id', { customer_id: '' }, /body\.customer_id/],
      ['a customer_name of 256 characters', { customer_name: 'n'.repeat(256) }, /body\.customer_name/],
    ];
    for (const [label, overrides, pattern] of badPayments) {
      it(`answers 400 for ${label}, and records nothing`, async () => {
        const { website, key } = await seeded();
        const body = JSON.parse(JSON.stringify(payment(overrides)));
        expectError(await t.request('POST', PAYMENTS, { token: key, body }), 400, pattern);
        expect(await paymentsOf(website.id)).toEqual([]);
      });
    }

    it('answers 400 for malformed JSON and 415 for another content type', async () => {
      const { key } = await seeded();
      expectError(await t.request('POST', PAYMENTS, { token: key, payload: '{"amount":', headers: json }), 400, /not valid JSON/);
      expectError(await t.request('POST', PAYMENTS, { token: key, payload: 'amount=1', headers: { 'content-type': 'text/plain' } }), 415);
    });
  });
});
