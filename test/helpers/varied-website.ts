import { expect } from 'vitest';
import { newId } from '../../src/lib/ids.ts';
import type { NewEvent } from '../../src/modules/events/event.types.ts';
import { type PaymentRow, refundPayment, storePayment } from './payments.ts';
import { upsertProfile } from '../../src/modules/identify/identify.repository.ts';
import { type TestApp, settleRollups } from './app.ts';
import { type TestAccount, createAccount, newEvent } from './factories.ts';

// A website with varied traffic for the round trip of the raw export (export, import elsewhere,
// every read equal): ten days of March 2026 in New York's time zone, 40 visitors over ~90 sessions
// (pages, entry and exit pages, referrers and campaigns, locations, devices, two hostnames),
// goals with properties, outbound clicks, payments in three currencies with renewals, refunds, a
// free trial and a provider's conversion, currency rates, two funnels (one inactive), notes,
// goal customizations and visitor profiles. Deterministic: a seeded generator, fixed instants.

export const VARIED_RANGE = { startAt: '2026-03-01', endAt: '2026-03-15' };

function generator(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
  return { next, pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]! };
}

const PAGES = ['/', '/pricing', '/blog/a', '/blog/b', '/docs', '/signup'];
const REFERRERS = [
  { referrer: 'https://www.google.com/', referrerHost: 'google.com', referrerSource: 'Google' },
  { referrer: 'https://news.ycombinator.com/', referrerHost: 'news.ycombinator.com', referrerSource: 'Hacker News' },
  { referrer: null, referrerHost: null, referrerSource: 'Direct/None' },
];
const PLACES = [
  { country: 'US', region: 'US-CA', city: 'San Jose' },
  { country: 'DE', region: 'DE-BE', city: 'Berlin' },
  { country: 'FR', region: 'FR-IDF', city: 'Paris' },
];
const AGENTS = [
  { browser: 'Chrome', browserVersion: '131.0', os: 'Windows', osVersion: '11', device: 'desktop' },
  { browser: 'Firefox', browserVersion: '133.0', os: 'Android', osVersion: '14', device: 'mobile' },
  { browser: 'Safari', browserVersion: '18.1', os: 'macOS', osVersion: '15', device: 'desktop' },
];

export interface VariedWebsite {
  owner: TestAccount;
  website: { id: string; domain: string };
  funnelIds: string[];
  visitorIds: string[];
}

async function ok(t: TestApp, token: string, method: string, url: string, body?: unknown) {
  const response = await t.request(method, url, { token, body });
  expect(response.status, `${method} ${url}: ${response.raw}`).toBe(200);
  return response.body.data[0];
}

export async function seedVariedWebsite(t: TestApp, domain: string): Promise<VariedWebsite> {
  const owner = await createAccount(t);
  const website = await ok(t, owner.token, 'POST', '/api/v1/admin/websites', { domain, timezone: 'America/New_York', name: 'Varied' });
  const admin = `/api/v1/admin/websites/${website.id}`;
  await ok(t, owner.token, 'PUT', admin, { currency: 'EUR', includeRenewalRevenue: true, excludedPaths: ['/admin/*'] });
  // The funnels before the traffic: created on a website with events, they would start a build of
  // its derived data, whose sessions differ from ingestion's on this traffic (docs/decisions.md,
  // "The funnel per stored funnel, kept"), and the round trip compares with ingestion's.
  const signup = await ok(t, owner.token, 'POST', `${admin}/funnels`, {
    name: 'Signup',
    steps: [{ name: 'Pricing', type: 'pageview', url: '/pricing' }, { name: 'Signed up', type: 'goal', goalName: 'signup' }],
  });
  const docs = await ok(t, owner.token, 'POST', `${admin}/funnels`, { name: 'Docs', steps: [{ type: 'pageview', url: '/' }, { type: 'pageview', url: '/docs' }] });
  await t.db.updateTable('funnels').set({ is_active: false }).where('id', '=', docs.id).execute();

  const random = generator(37);
  const events: NewEvent[] = [];
  const visitorIds: string[] = [];
  for (let v = 0; v < 40; v++) {
    const visitorId = `visitor-${String(v).padStart(2, '0')}`;
    visitorIds.push(visitorId);
    const place = random.pick(PLACES);
    const agent = random.pick(AGENTS);
    const sessions = 1 + Math.floor(random.next() * 3);
    for (let s = 0; s < sessions; s++) {
      const from = random.pick(REFERRERS);
      const campaign = random.next() < 0.3 ? { utmSource: 'newsletter', utmMedium: 'email', utmCampaign: random.pick(['spring', 'launch']) } : {};
      // Sessions over days 2..11, at hours that cross the New York midnight in UTC.
      let at = Date.UTC(2026, 2, 2 + Math.floor(random.next() * 10), Math.floor(random.next() * 24), Math.floor(random.next() * 60));
      const sessionId = `${visitorId}-s${s}`;
      const base = { sessionId, hostname: random.next() < 0.85 ? domain : `docs.${domain}`, country: place.country, browser: agent.browser, os: agent.os, device: agent.device };
      const details = { region: place.region, city: place.city, browserVersion: agent.browserVersion, osVersion: agent.osVersion, viewportWidth: 1280, viewportHeight: 800 };
      const pages = 1 + Math.floor(random.next() * 4);
      for (let p = 0; p < pages; p++) {
        const first = p === 0;
        events.push(
          newEvent(website.id, visitorId, {
            ...base,
            path: random.pick(PAGES),
            referrer: first ? from.referrer : null,
            occurredAt: new Date(at).toISOString(),
            details: { ...details, ...(first ? { referrerHost: from.referrerHost, referrerSource: from.referrerSource, ...campaign } : { referrerSource: 'Direct/None' }) },
          }),
        );
        at += (1 + Math.floor(random.next() * 5)) * 60_000;
      }
      if (random.next() < 0.35) {
        events.push(
          newEvent(website.id, visitorId, {
            ...base,
            type: 'custom',
            name: random.pick(['signup', 'download']),
            path: '/signup',
            metadata: { plan: random.pick(['pro', 'free']) },
            occurredAt: new Date(at).toISOString(),
            details,
          }),
        );
      }
      if (random.next() < 0.2) {
        events.push(
          newEvent(website.id, visitorId, {
            ...base,
            type: 'external_link',
            path: '/docs',
            occurredAt: new Date(at + 1000).toISOString(),
            details: { ...details, linkUrl: random.pick(['https://github.com/acme', 'https://x.com/acme']) },
          }),
        );
      }
    }
  }
  // In batches, as ingestion commits them, each derived after its commit.
  for (let i = 0; i < events.length; i += 50) {
    await t.app.events.write(events.slice(i, i + 50));
    await settleRollups(t)();
  }

  const payment = async (i: number, overrides: Partial<PaymentRow>) =>
    storePayment(t.db, {
        id: newId(),
        website_id: website.id,
        transaction_id: `tx-${i}`,
        amount_minor: 1000 + i * 250,
        currency: 'USD',
        visitor_id: visitorIds[i * 3]!,
        email: null,
        renewal: false,
        refunded: false,
        occurred_at: new Date(Date.UTC(2026, 2, 3 + (i % 8), 15, i)).toISOString(),
        created_at: new Date(Date.UTC(2026, 2, 3 + (i % 8), 15, i)).toISOString(),
        ...overrides,
      });
  for (let i = 0; i < 12; i++) {
    await payment(i, {
      currency: ['USD', 'EUR', 'GBP'][i % 3]!,
      renewal: i % 4 === 3,
      is_free_trial: i === 5,
      ...(i === 7 ? { converted_minor: 2100, converted_currency: 'EUR' } : {}),
      ...(i === 11 ? { visitor_id: null, email: 'buyer@example.com' } : {}),
    } as never);
  }
  await refundPayment(t.db, website.id, 'tx-2');
  await ok(t, owner.token, 'PUT', `${admin}/currency-rates/USD`, { rate: 0.92 });
  // Not 1.17: 2250 pence at 1.17 is 2632.5 cents, a tie that SQLite's round() takes up and
  // PostgreSQL's (half to even, on double precision) down: a difference of the engines' reads, not of the import.
  await ok(t, owner.token, 'PUT', `${admin}/currency-rates/GBP`, { rate: 1.1713 });

  await ok(t, owner.token, 'POST', `${admin}/notes`, { text: 'Launched pricing', timestamp: '2026-03-04T12:00:00.000Z' });
  await ok(t, owner.token, 'POST', `${admin}/notes`, { text: 'Newsletter sent', timestamp: '2026-03-08T09:30:00.000Z' });
  await ok(t, owner.token, 'PATCH', `${admin}/goals/customizations`, { goalName: 'signup', displayName: 'Sign up', color: '#22c55e' });
  for (const [i, visitorId] of visitorIds.slice(0, 5).entries()) {
    await upsertProfile(t.db, {
      website_id: website.id,
      visitor_id: visitorId,
      user_id: `user-${i}@example.com`,
      name: `User ${i}`,
      image: null,
      metadata: i % 2 === 0 ? { plan: 'pro' } : null,
      identified_at: new Date(Date.UTC(2026, 2, 5, 10, i)).toISOString(),
    });
  }
  await ok(t, owner.token, 'PUT', admin, { kpi: 'signup' });
  return { owner, website: { id: website.id, domain }, funnelIds: [signup.id, docs.id], visitorIds };
}

const BREAKDOWNS = [
  'pages', 'entry-pages', 'exit-pages', 'referrers', 'campaigns', 'countries', 'regions', 'cities', 'devices', 'browsers',
  'operating-systems', 'hostnames', 'goals', 'exit-clicks',
];

/** Every read of the website API (and the admin reads the import brings), each answer as JSON text with the website's id replaced. */
export async function everyRead(t: TestApp, token: string, websiteId: string, site: Pick<VariedWebsite, 'funnelIds' | 'visitorIds'>): Promise<Record<string, unknown>> {
  const reads: Record<string, unknown> = {};
  /** The answer (a 404 too: an inactive funnel's), its website id and request id left out. */
  const get = async (name: string, url: string, query: Record<string, string> = {}, scoped = true) => {
    const response = await t.request('GET', url, { token, query: scoped ? { websiteId, ...query } : query });
    expect([200, 404], `${name}: ${response.raw}`).toContain(response.status);
    // Durations up to the moment of the read (timeSinceFirstVisit...) differ by the time between the two reads.
    const body = JSON.parse(response.raw.replaceAll(websiteId, '<website>'), (key, value) => (key.startsWith('timeSince') ? undefined : value));
    if (body.error) delete body.error.requestId;
    reads[name] = { httpStatus: response.status, ...body };
  };
  const range = VARIED_RANGE;
  await get('overview', '/api/v1/analytics/overview', range);
  await get('overview US', '/api/v1/analytics/overview', { ...range, filter_country: 'is:US' });
  await get('overview all time', '/api/v1/analytics/overview', { startAt: '2020-01-01', endAt: '2026-12-31' });
  for (const interval of ['day', 'week', 'month']) {
    await get(`timeseries ${interval}`, '/api/v1/analytics/timeseries', { ...range, interval, fields: 'visitors,sessions,pageviews,revenue,payments,conversion_rate' });
  }
  await get('timeseries hour', '/api/v1/analytics/timeseries', { startAt: '2026-03-04', endAt: '2026-03-05', interval: 'hour', fields: 'visitors,pageviews,revenue' });
  for (const kind of BREAKDOWNS) {
    await get(kind, `/api/v1/analytics/${kind}`, range);
    await get(`${kind} from Google`, `/api/v1/analytics/${kind}`, { ...range, filter_referrer: 'is:Google' });
  }
  await get('pages of signups', '/api/v1/analytics/pages', { ...range, filter_goal: 'is:signup' });
  await get('goal properties', '/api/v1/analytics/goals/properties', { ...range, eventName: 'signup' });
  await get('metadata', '/api/v1/analytics/metadata');
  for (const funnelId of site.funnelIds) await get(`funnel ${funnelId}`, `/api/v1/analytics/funnels/${funnelId}`, range);
  await get('visitors', '/api/v1/visitors', { ...range, limit: '100' });
  await get('customers', '/api/v1/visitors', { ...range, isCustomer: 'true' });
  for (const visitorId of site.visitorIds.slice(0, 8)) await get(`visitor ${visitorId}`, `/api/v1/visitors/${visitorId}`, range);
  const admin = `/api/v1/admin/websites/${websiteId}`;
  for (const part of ['goals', 'goals/customizations', 'funnels', 'currency-rates', 'notes']) await get(`admin ${part}`, `${admin}/${part}`, {}, false);
  return reads;
}
