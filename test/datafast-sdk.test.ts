import type { AddressInfo } from 'node:net';
import { initDataFast } from 'datafast';
import { Window } from 'happy-dom';
import { beforeAll, expect, it } from 'vitest';
import { useTestApp } from './helpers/app.ts';
import { describeEachEventEngine } from './helpers/clickhouse.ts';
import { createAccount, createWebsite } from './helpers/factories.ts';

// The public `datafast` web SDK (v3), unmodified, in a happy-dom page, sending to a real
// listening Sightline. happy-dom's fetch behaves like a browser's: it sends the page's user agent
// and Origin, and makes the CORS preflight a cross-origin JSON POST needs.

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const BROWSER_GLOBALS = ['window', 'document', 'navigator', 'localStorage', 'sessionStorage', 'location', 'history', 'fetch'] as const;

/** Makes `url` the page the SDK runs in, through the globals it reads; close() puts Node's back. */
function openPage(url: string) {
  const window = new Window({ url, settings: { navigator: { userAgent: CHROME } } });
  // happy-dom reports an automated browser, and the SDK turns itself off for those.
  Object.defineProperty(window.navigator, 'webdriver', { configurable: true, get: () => false });
  const values: Record<(typeof BROWSER_GLOBALS)[number], unknown> = {
    window,
    document: window.document,
    navigator: window.navigator,
    localStorage: window.localStorage,
    sessionStorage: window.sessionStorage,
    location: window.location,
    history: window.history,
    fetch: window.fetch.bind(window),
  };
  const saved = BROWSER_GLOBALS.map((name) => [name, Object.getOwnPropertyDescriptor(globalThis, name)] as const);
  for (const name of BROWSER_GLOBALS) {
    Object.defineProperty(globalThis, name, { configurable: true, writable: true, value: values[name] });
  }
  return {
    window,
    async close() {
      for (const [name, descriptor] of saved) {
        if (descriptor) Object.defineProperty(globalThis, name, descriptor);
        else delete (globalThis as Record<string, unknown>)[name];
      }
      await window.happyDOM.close();
    },
  };
}

describeEachEventEngine('the datafast SDK against Sightline', (engine) => {
  const t = useTestApp(engine);
  let apiUrl: string;

  beforeAll(async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    apiUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/api/events`;
  });

  it('delivers a pageview and a custom goal that land in the events table', async () => {
    const account = await createAccount(t);
    const website = await createWebsite(t, account.token);
    // http: happy-dom, like a browser, blocks an https page from posting to an http API.
    const page = openPage(`http://${website.domain}/pricing?utm_source=newsletter`);
    let visitorId: string | null;
    try {
      const datafast = await initDataFast({ websiteId: website.trackingId, apiUrl, flushInterval: 60_000 });
      expect(datafast.isInitialized()).toBe(true);
      await datafast.trackPageview();
      await datafast.track('signup', { plan: 'Pro', seats: 3 });
      await datafast.flush();
      visitorId = datafast.getVisitorId();
      await datafast.shutdown();
    } finally {
      await page.close();
    }

    const rows = await t.storedEvents(website.id);
    expect(rows.map((r) => [r.type, r.name, r.path])).toEqual([
      ['pageview', null, '/pricing'],
      ['custom', 'signup', '/pricing'],
    ]);
    for (const row of rows) {
      expect(row).toMatchObject({ visitor_id: visitorId, hostname: website.domain, browser: 'Chrome', os: 'Windows', source: 'browser' });
      expect(row.session_id).toMatch(/^s[0-9a-f-]{36}$/);
    }
    expect(JSON.parse(rows[1]!.metadata!)).toEqual({ plan: 'Pro', seats: '3' });
  });

  it("turns identify() into the visitor's profile, adding no page view", async () => {
    const account = await createAccount(t);
    const website = await createWebsite(t, account.token);
    const page = openPage(`http://${website.domain}/account`);
    let visitorId: string | null;
    try {
      const datafast = await initDataFast({ websiteId: website.trackingId, apiUrl, flushInterval: 60_000 });
      await datafast.trackPageview();
      await datafast.identify('user_42', { name: 'Ada Lovelace', image: 'https://example.com/ada.png', plan: 'pro' });
      await datafast.flush();
      visitorId = datafast.getVisitorId();
      await datafast.shutdown();
    } finally {
      await page.close();
    }

    const visitor = await t.request('GET', `/api/v1/visitors/${visitorId}`, { token: account.token, query: { websiteId: website.id } });
    expect(visitor.status, visitor.raw).toBe(200);
    expect(visitor.body.data.profile).toMatchObject({
      userId: 'user_42',
      name: 'Ada Lovelace',
      image: 'https://example.com/ada.png',
      metadata: { plan: 'pro' },
    });
    expect((await t.storedEvents(website.id)).map((r) => r.type)).toEqual(['pageview']);
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    const overview = await t.request('GET', '/api/v1/analytics/overview', {
      token: account.token,
      query: { websiteId: website.id, startAt: day(-1), endAt: day(1), timezone: 'UTC' },
    });
    expect(overview.body.data[0], overview.raw).toMatchObject({ visitors: 1, sessions: 1, pageviews: 1 });
  });

  it('takes the server-derived visitor id on a cookieless website', async () => {
    const account = await createAccount(t);
    const website = await createWebsite(t, account.token);
    const settings = await t.request('PUT', `/api/v1/admin/websites/${website.id}`, { token: account.token, body: { isCookieless: true } });
    expect(settings.status, settings.raw).toBe(200);
    const page = openPage(`http://${website.domain}/`);
    let visitorId: string | null;
    try {
      const datafast = await initDataFast({ websiteId: website.trackingId, apiUrl, cookieless: true, flushInterval: 60_000 });
      await datafast.trackPageview();
      await datafast.track('newsletter_signup');
      await datafast.flush();
      visitorId = datafast.getVisitorId();
      await datafast.shutdown();
    } finally {
      await page.close();
    }

    const rows = await t.storedEvents(website.id);
    expect(rows.map((r) => r.type)).toEqual(['pageview', 'custom']);
    // The SDK sends a fresh random id with every cookieless event; the server's id is stable.
    expect(rows[0]!.visitor_id).toBe(rows[1]!.visitor_id);
    expect(visitorId).toBe(rows[0]!.visitor_id);
  });
});
