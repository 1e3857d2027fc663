import { sql } from 'kysely';
import { newId } from '../../src/lib/ids.ts';
import { countPayments } from '../../src/modules/analytics/maintainer.ts';
import type { NewEvent } from '../../src/modules/events/event.types.ts';
import { insertPaymentOnce } from '../../src/modules/events/server-events.repository.ts';
import { type TestApp, writeAndDerive } from './app.ts';
import { type TestAccount, createAccount, createWebsite, newEvent } from './factories.ts';

// A small website with known traffic in March 2026 (UTC), for the website API's read tests:
//   v1  session s1, 03-02 10:00-10:07: / from Google (utm_campaign spring, US, Chrome desktop),
//       /pricing, goal signup {plan: pro}, outbound click to GitHub; paid 49.00 USD
//   v2  session s2, 03-02 11:00: /pricing, direct (DE, Firefox mobile); a bounce
//   v3  session s3, 03-03 12:00-12:10: /blog/a then /pricing (US, Safari desktop), direct;
//       session s4, 03-05 09:00: / (a bounce)
// So: 3 visitors, 6 pageviews, 4 sessions, 2 bounces, 1 converted visitor, 49.00 of revenue.

export interface Fixture {
  owner: TestAccount;
  website: { id: string; domain: string; trackingId: string };
}

const US_CHROME = { country: 'US', browser: 'Chrome', os: 'Windows', device: 'desktop' };
const DE_FIREFOX = { country: 'DE', browser: 'Firefox', os: 'Android', device: 'mobile' };
const US_SAFARI = { country: 'US', browser: 'Safari', os: 'macOS', device: 'desktop' };
const DIRECT = { referrerSource: 'Direct/None', referrerHost: null };

export async function analyticsFixture(t: TestApp): Promise<Fixture> {
  const owner = await createAccount(t);
  const website = (await createWebsite(t, owner.token, `shop-${newId().slice(-8)}.example.com`)) as Fixture['website'];
  const at = (visitorId: string, sessionId: string, occurredAt: string, extra: Partial<NewEvent>) =>
    newEvent(website.id, visitorId, { sessionId, hostname: website.domain, occurredAt, ...extra });
  const events: NewEvent[] = [
    at('v1', 's1', '2026-03-02T10:00:00.000Z', {
      path: '/',
      ...US_CHROME,
      details: { referrerSource: 'Google', referrerHost: 'google.com', utmCampaign: 'spring', region: 'California', city: 'San Jose', browserVersion: '131.0' },
    }),
    at('v1', 's1', '2026-03-02T10:05:00.000Z', { path: '/pricing', ...US_CHROME, details: { ...DIRECT, region: 'California', city: 'San Jose' } }),
    at('v1', 's1', '2026-03-02T10:06:00.000Z', { type: 'custom', name: 'signup', path: '/pricing', metadata: { plan: 'pro' }, ...US_CHROME }),
    at('v1', 's1', '2026-03-02T10:07:00.000Z', { type: 'external_link', path: '/pricing', ...US_CHROME, details: { linkUrl: 'https://github.com/acme' } }),
    at('v2', 's2', '2026-03-02T11:00:00.000Z', { path: '/pricing', ...DE_FIREFOX, details: DIRECT }),
    at('v3', 's3', '2026-03-03T12:00:00.000Z', { path: '/blog/a', ...US_SAFARI, details: DIRECT }),
    at('v3', 's3', '2026-03-03T12:10:00.000Z', { path: '/pricing', ...US_SAFARI, details: DIRECT }),
    at('v3', 's4', '2026-03-05T09:00:00.000Z', { path: '/', ...US_SAFARI, details: DIRECT }),
  ];
  // One derivation per event, as if each had come alone (the rollups' incremental path at its finest).
  for (const event of events) await writeAndDerive(t, [event]);
  // Stored as the payments' writer stores it, and counted at once into the breakdowns' revenue (as an import does, under the lock).
  const paymentId = newId();
  await t.db.transaction().execute(async (trx) => {
    await insertPaymentOnce(trx, {
      id: paymentId,
      website_id: website.id,
      transaction_id: `tx-${newId()}`,
      amount_minor: 4900,
      currency: 'USD',
      visitor_id: 'v1',
      email: null,
      renewal: false,
      refunded: false,
      occurred_at: '2026-03-02T10:08:00.000Z',
      created_at: '2026-03-02T10:08:00.000Z',
    });
    await countPayments(trx, website.id, sql`p.id = ${paymentId}`);
  });
  return { owner, website };
}

export const MARCH = { startAt: '2026-03-01', endAt: '2026-03-31' };
