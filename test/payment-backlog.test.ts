import { type Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { lockWebsiteRollups } from '../src/db/locks.ts';
import { paymentBacklog } from '../src/db/migrations/0038-payment-backlog.ts';
import type { NewEvent } from '../src/modules/events/event.types.ts';
import { recordEvents } from '../src/modules/events/record-events.ts';
import { recordPayment } from '../src/modules/events/server-events.service.ts';
import { type TestApp, useTestApp } from './helpers/app.ts';
import { DERIVED, rebuilt, rowsOf } from './helpers/derived-tables.ts';
import { POSTGRES_URL, describeEachEngine, postgresProblem } from './helpers/engines.ts';
import { createApiKey, newEvent, ownerWithWebsite } from './helpers/factories.ts';
import { hold, within } from './helpers/held-locks.ts';

// Payments go through the rollup backlog like events (issue 38): POST /api/v1/payments, a
// refund, a provider's conversion write the payment and a backlog row naming it, with no
// derived-data lock, and the fold counts it (src/modules/analytics/payment-counts.ts). So a
// payment no longer waits for a fold under way, and the derived tables still equal a rebuild
// whatever order events, payments, refunds, conversions, deletes and folds come in.

const PAYMENTS = '/api/v1/payments';
const GOALS = '/api/v1/goals';
const EFFECTS = { alertCooldownSeconds: 60, mailEnabled: false };

/** A small deterministic generator (mulberry32), so a failing order can be replayed from its seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function expectTablesEqualRebuild(t: TestApp, websiteId: string): Promise<void> {
  await t.app.events.flush();
  await t.app.rollups!.settle(websiteId);
  const waiting = await t.db.selectFrom('rollup_backlog').select('seq').where('website_id', '=', websiteId).execute();
  expect(waiting).toEqual([]);
  // Every payment held as its columns say: refunded ones not at all, the others with their conversion when they have one.
  const payments = await t.db.selectFrom('payments').select(['transaction_id', 'refunded', 'converted_currency', 'counted']).where('website_id', '=', websiteId).execute();
  for (const p of payments) expect(Number(p.counted), p.transaction_id).toBe(p.refunded ? 0 : p.converted_currency === null ? 1 : 2);
  // In the website's own zone (the factories' Europe/Paris): a rebuild in UTC put the day's
  // visitors on another day than the fold did in the last hour of every UTC day.
  const { timezone } = await t.db.selectFrom('websites').select('timezone').where('id', '=', websiteId).executeTakeFirstOrThrow();
  const expected = await rebuilt(t.db, websiteId, timezone);
  for (const table of DERIVED) expect(await rowsOf(t.db, table, websiteId), table).toEqual(expected[table]);
}

describe.skipIf(Boolean(postgresProblem))(`payments while a fold runs on PostgreSQL${postgresProblem ? ` (skipped: unreachable at ${POSTGRES_URL})` : ''}`, () => {
  const t = useTestApp('postgres');

  it('records a payment, a refund and a conversion at once while the fold holds the derived data, and the next read counts them', async () => {
    const { owner, website } = await ownerWithWebsite(t);
    const key = (await createApiKey(t, owner.token, website.id)).key;
    await t.app.events.write([newEvent(website.id, 'payer', { path: '/pricing' })]);
    const pay = (body: Record<string, unknown>) => t.request('POST', PAYMENTS, { token: key, body });
    expect((await pay({ transaction_id: 'tx-earlier', amount: 7, currency: 'USD', datafast_visitor_id: 'payer' })).status).toBe(200);
    expect((await pay({ transaction_id: 'tx-gbp', amount: 8, currency: 'GBP', datafast_visitor_id: 'payer' })).status).toBe(200);
    await t.app.rollups!.settle(website.id);

    const fold = await hold(t.db, (trx) => lockWebsiteRollups(trx, website.id));
    try {
      const payment = pay({ transaction_id: 'tx-during', amount: 12.5, currency: 'USD', datafast_visitor_id: 'payer' });
      expect(await within(payment, 2000)).toBe('done');
      expect((await payment).body).toEqual({ message: 'Payment recorded', transaction_id: 'tx-during' });
      const refund = pay({ transaction_id: 'tx-earlier', amount: 7, currency: 'USD', refunded: true });
      expect(await within(refund, 2000)).toBe('done');
      expect((await refund).body.message).toBe('Payment already recorded; now marked as refunded');
      // A provider's webhook bringing the conversion of a payment recorded without one.
      const conversion = recordPayment(t.db, website.id, { transaction_id: 'tx-gbp', amount: 8, currency: 'GBP' }, { amountMinor: 1040, currency: 'USD' }, t.app.rollups);
      expect(await within(conversion, 2000)).toBe('done');
    } finally {
      fold.release();
      await fold.done;
    }
    const pages = await t.request('GET', '/api/v1/analytics/pages', { token: owner.token, query: { websiteId: website.id } });
    expect(pages.status, pages.raw).toBe(200);
    await expectTablesEqualRebuild(t, website.id);
    const revenue = await t.db.selectFrom('breakdown_revenue').selectAll().where('website_id', '=', website.id).where('breakdown', '=', 'pages').execute();
    const byCurrency = Object.fromEntries(revenue.map((row) => [`${row.currency}/${row.converted_currency}`, [Number(row.minor), Number(row.converted_minor)]]));
    expect(byCurrency).toEqual({ 'USD/': [1250, 0], 'GBP/USD': [800, 1040], 'GBP/': [0, 0] });
  });
});

describeEachEngine('payments through the backlog', (engine) => {
  const t = useTestApp(engine);

  it("counts a payment of a visitor whose events still wait on their rows, as if folded after them", async () => {
    const { owner, website } = await ownerWithWebsite(t);
    const key = (await createApiKey(t, owner.token, website.id)).key;
    // Events accepted as ingestion accepts them but no deriver told: they wait in the backlog.
    await t.db.transaction().execute((trx) =>
      recordEvents(trx, [newEvent(website.id, 'late', { path: '/late', country: 'FR', occurredAt: '2026-03-02T10:00:00.000Z' })], EFFECTS),
    );
    const paid = await t.request('POST', PAYMENTS, { token: key, body: { transaction_id: 'tx-late', amount: 30, currency: 'EUR', datafast_visitor_id: 'late' } });
    expect(paid.status, paid.raw).toBe(200);
    const order = await t.db.selectFrom('rollup_backlog').select(['event_id', 'payment_id']).where('website_id', '=', website.id).orderBy('seq').execute();
    expect(order.map((row) => (row.event_id === null ? 'payment' : 'event'))).toEqual(['event', 'payment']);
    await expectTablesEqualRebuild(t, website.id);
    const late = await t.db.selectFrom('breakdown_revenue').select(['minor']).where('website_id', '=', website.id).where('breakdown', '=', 'pages').where('key', 'like', '%/late%').execute();
    expect(late.map((row) => Number(row.minor))).toEqual([3000]);
  });

  it('migration 0038 refuses to go down while payment changes wait, and goes down and up once none does, each payment held as it is', async () => {
    const { owner, website } = await ownerWithWebsite(t);
    const key = (await createApiKey(t, owner.token, website.id)).key;
    await t.app.events.write([newEvent(website.id, 'payer')]);
    await t.app.rollups!.settle(website.id);
    const migration = paymentBacklog(engine);
    const untyped = t.db as unknown as Kysely<unknown>;
    // Held in the backlog: written as the route writes it, but no deriver is woken.
    await recordPayment(t.db, website.id, { transaction_id: 'tx-waiting', amount: 5, currency: 'USD', datafast_visitor_id: 'payer' }, null, { wake: () => {} });
    await expect(migration.down(untyped)).rejects.toThrow(/rollup_backlog holds 1 payment changes not yet counted/);
    await t.app.rollups!.settle(website.id);
    const refunded = await t.request('POST', PAYMENTS, { token: key, body: { transaction_id: 'tx-refunded', amount: 3, currency: 'USD', datafast_visitor_id: 'payer', refunded: true } });
    expect(refunded.status, refunded.raw).toBe(200);
    await migration.down(untyped);
    await migration.up(untyped);
    await expectTablesEqualRebuild(t, website.id);
  });

  it('keeps the derived tables equal to a rebuild after events, payments, refunds, conversions and deletes in random order', async () => {
    const { owner, website } = await ownerWithWebsite(t);
    const key = (await createApiKey(t, owner.token, website.id)).key;
    const next = random(engine === 'sqlite' ? 38 : 3838);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
    const visitors = ['v1', 'v2', 'v3', 'v4', 'v5'];
    const transactions: { id: string; currency: string; amount: number }[] = [];
    let n = 0;
    let instants = 0;
    /**
     * A visit of two events in a session of its own, after the visits before it (the events'
     * rollups take late visits only as far as ingestion gives them; what is random here is how
     * payments interleave with them), over several days.
     */
    const visit = (visitor: string): NewEvent[] => {
      const start = Date.UTC(2026, 2, 1) + instants * 97 * 60_000;
      instants += 2;
      const session = `s-${visitor}-${instants}`;
      return [0, 1].map((i) => {
        const occurredAt = new Date(start + i * 1000).toISOString();
        return next() < 0.2
          ? newEvent(website.id, visitor, { type: 'custom', name: 'upgrade', source: 'api', sessionId: null, hostname: null, path: null, occurredAt })
          : newEvent(website.id, visitor, { sessionId: session, path: pick(['/', '/pricing', '/docs']), country: pick(['US', 'DE', 'FR']), browser: pick(['Firefox', 'Chrome']), occurredAt });
      });
    };
    const ok = (response: { status: number; raw: string }) => expect(response.status, response.raw).toBe(200);
    for (let step = 0; step < 70; step++) {
      const roll = next();
      if (roll < 0.3) {
        const events = visit(pick(visitors));
        if (next() < 0.5) await t.app.events.write(events);
        else await t.db.transaction().execute((trx) => recordEvents(trx, events, EFFECTS)); // waits for a fold
      } else if (roll < 0.55) {
        const payment = { id: `tx-${n++}`, currency: pick(['USD', 'EUR', 'GBP']), amount: 1 + Math.floor(next() * 50) };
        transactions.push(payment);
        const visitor = next() < 0.85 ? pick([...visitors, 'never-seen']) : undefined;
        ok(await t.request('POST', PAYMENTS, { token: key, body: { transaction_id: payment.id, amount: payment.amount, currency: payment.currency, renewal: next() < 0.3, datafast_visitor_id: visitor } }));
      } else if (roll < 0.65 && transactions.length > 0) {
        const payment = pick(transactions);
        ok(await t.request('POST', PAYMENTS, { token: key, body: { transaction_id: payment.id, amount: payment.amount, currency: payment.currency, refunded: true } }));
      } else if (roll < 0.75 && transactions.length > 0) {
        const payment = pick(transactions);
        const into = payment.currency === 'USD' ? 'EUR' : 'USD';
        await recordPayment(t.db, website.id, { transaction_id: payment.id, amount: payment.amount, currency: payment.currency }, { amountMinor: payment.amount * 90, currency: into }, t.app.rollups);
      } else if (roll < 0.8 && transactions.length > 0) {
        const payment = transactions.splice(Math.floor(next() * transactions.length), 1)[0]!;
        ok(await t.request('DELETE', PAYMENTS, { token: key, query: { transaction_id: payment.id } }));
      } else if (roll < 0.85) {
        ok(await t.request('DELETE', GOALS, { token: key, query: { name: 'upgrade', datafast_visitor_id: pick(visitors) } }));
      } else if (roll < 0.95) {
        await t.app.rollups!.settle(website.id);
      } else {
        await expectTablesEqualRebuild(t, website.id);
      }
    }
    await expectTablesEqualRebuild(t, website.id);
    const counted = await sql<{ n: number }>`select count(*) as n from payments where website_id = ${website.id} and counted > 0`.execute(t.db);
    expect(Number(counted.rows[0]!.n)).toBeGreaterThan(0);
  });
});
