import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { loadConfig } from '../src/config.ts';
import { describe, expect, it } from 'vitest';
import { generateCredential } from '../src/auth/tokens.ts';
import { describeRequestWithoutAddress } from '../src/http/logging.ts';
import { DailySalts, cookielessVisitorId } from '../src/modules/events/ingest.visitor-id.ts';
import { type TestApp, useTestApp } from './helpers/app.ts';
import { describeEachEventEngine } from './helpers/clickhouse.ts';
import { type TestAccount, UNKNOWN_ID, createAccount, createWebsite, expectError } from './helpers/factories.ts';
import { CHROME, CLIENT_IP, GOOGLEBOT, IPHONE, type Website, goal, pageview, send } from './helpers/browser-events.ts';

async function configure(t: TestApp, account: TestAccount, website: Website, settings: Record<string, unknown>) {
  const response = await t.request('PUT', `/api/v1/admin/websites/${website.id}`, { token: account.token, body: settings });
  expect(response.status, response.raw).toBe(200);
}

async function newWebsite(t: TestApp, settings?: Record<string, unknown>) {
  const account = await createAccount(t);
  const website = await createWebsite(t, account.token);
  if (settings) await configure(t, account, website, settings);
  return { account, website };
}

function expectDropped(response: Awaited<ReturnType<typeof send>>, reason: string) {
  expect(response.status, response.raw).toBe(200);
  expect(response.headers['x-sightline-dropped']).toBe(reason);
  expect(response.body).toEqual({ status: 'success', dropped: reason });
}

function expectStored(response: Awaited<ReturnType<typeof send>>) {
  expect(response.status, response.raw).toBe(200);
  expect(response.headers['x-sightline-dropped']).toBeUndefined();
  expect(response.body).toMatchObject({ status: 'success', eventId: expect.any(String), visitorId: expect.any(String) });
}

describeEachEventEngine('browser ingestion', (engine) => {
  const t = useTestApp(engine);

  describe('accepted events', () => {
    it('stores a pageview sent with the tracking id, reading host, path and device from the request', async () => {
      const { website } = await newWebsite(t);
      const event = pageview(website);
      const response = await send(t, event);
      expectStored(response);
      expect(response.headers['access-control-allow-origin']).toBe('*');
      const rows = await t.storedEvents(website.id);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        id: response.body.eventId,
        type: 'pageview',
        name: null,
        visitor_id: event.visitorId,
        session_id: event.sessionId,
        hostname: website.domain,
        path: '/pricing',
        referrer: 'https://news.example.org/item',
        country: null,
        browser: 'Chrome',
        os: 'Windows',
        device: 'desktop',
        metadata: null,
        source: 'browser',
      });
      expect(response.body.visitorId).toBe(event.visitorId);
      expect(Date.parse(rows[0]!.occurred_at)).toBeGreaterThan(Date.now() - 60_000);
    });

    it('stores the referrer without its query string, fragment, user info or a credential in its path', async () => {
      const { website } = await newWebsite(t);
      const token = generateCredential('token');
      const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U';
      const referrers: Array<[string | null, string | null]> = [
        [`https://alice:s3cret@mail.example.com/reset/confirm?token=${token}&utm_source=mail#access_token=${jwt}`, 'https://mail.example.com/reset/confirm'],
        [`https://app.example.net/invite/${token}/accept`, 'https://app.example.net/invite/[redacted]/accept'],
        ['https://www.google.com/', 'https://www.google.com/'],
        ['android-app://com.slack/', 'android-app://com.slack/'],
        ['https://news.example.org/item#comments', 'https://news.example.org/item'],
        ['?q=only-a-query', null],
        ['', null],
        [null, null],
      ];
      for (const [referrer] of referrers) expectStored(await send(t, pageview(website, { referrer })));
      const rows = await t.storedEvents(website.id);
      expect(rows.map((row) => row.referrer)).toEqual(referrers.map(([, stored]) => stored));
      // Values only: the column names include utm_source, which the referrer's query must not fill.
      const stored = JSON.stringify(rows.map((row) => Object.values(row)));
      for (const secret of [token, jwt, 's3cret', 'utm_source', 'only-a-query']) expect(stored).not.toContain(secret);
    });

    it('accepts the website id in place of the tracking id, and reads a phone as mobile', async () => {
      const { website } = await newWebsite(t);
      expectStored(await send(t, pageview(website, { websiteId: website.id }), { userAgent: IPHONE }));
      const [row] = await t.storedEvents(website.id);
      expect(row).toMatchObject({ browser: 'Safari', os: 'iOS', device: 'mobile' });
    });

    it('stores a custom goal with its string properties, names lower-cased as the SDK does', async () => {
      const { website } = await newWebsite(t);
      expectStored(await send(t, goal(website, 'signup', { plan: 'pro', Source: 'homepage' })));
      const [row] = await t.storedEvents(website.id);
      expect(row).toMatchObject({ type: 'custom', name: 'signup', referrer: null });
      expect(JSON.parse(row!.metadata!)).toEqual({ plan: 'pro', source: 'homepage' });
    });

    it('stores a goal without properties with null metadata', async () => {
      const { website } = await newWebsite(t);
      expectStored(await send(t, goal(website, 'checkout:started')));
      const [row] = await t.storedEvents(website.id);
      expect(row).toMatchObject({ name: 'checkout:started', metadata: null });
    });

    it('stores payment and external_link events with their details as strings (identify: test/ingest-identify.test.ts)', async () => {
      const { website } = await newWebsite(t);
      expectStored(await send(t, pageview(website, { type: 'payment', extraData: { email: 'ann@example.com', amount: 99, currency: 'USD' } })));
      expectStored(await send(t, pageview(website, { type: 'external_link', extraData: { url: 'https://other.example.org/', text: 'Docs' } })));
      const rows = await t.storedEvents(website.id);
      expect(rows.map((r) => [r.type, r.name, JSON.parse(r.metadata!)])).toEqual([
        ['payment', null, { email: 'ann@example.com', amount: '99', currency: 'USD' }],
        ['external_link', null, { url: 'https://other.example.org/', text: 'Docs' }],
      ]);
    });

    it('accepts a text/plain body, as navigator.sendBeacon sends it', async () => {
      const { website } = await newWebsite(t);
      expectStored(await send(t, pageview(website), { contentType: 'text/plain;charset=UTF-8' }));
      expect(await t.storedEvents(website.id)).toHaveLength(1);
    });

    it('ignores fields it does not model, so a newer SDK still gets through', async () => {
      const { website } = await newWebsite(t);
      expectStored(await send(t, pageview(website, { adClickIds: { gclid: 'abc' }, someFutureField: { nested: [1, 2] } })));
      const [row] = await t.storedEvents(website.id);
      expect(JSON.stringify(row)).not.toContain('someFutureField');
    });
  });

  describe('refused requests', () => {
    it('answers 400 naming the field for a bad value of a known field, and stores nothing', async () => {
      const { website } = await newWebsite(t);
      const elevenProperties = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`p${i}`, 'x']));
      const cases: Array<[unknown, RegExp]> = [
        [pageview(website, { type: 'click' }), /^body\.type: must be/],
        [pageview(website, { websiteId: undefined }), /^body\.websiteId: is required/],
        [pageview(website, { href: 'not a url' }), /^body\.href: must be an absolute URL/],
        [pageview(website, { href: undefined }), /^body\.href: is required/],
        [pageview(website, { referrer: 42 }), /^body\.referrer: must be string or null/],
        [pageview(website, { visitorId: undefined }), /^body\.visitorId: is required/],
        [pageview(website, { visitorId: 'has spaces in it' }), /^body\.visitorId: must match pattern/],
        [pageview(website, { screenWidth: 'wide' }), /^body\.screenWidth: must be number/],
        [pageview(website, { type: 'custom' }), /^body\.extraData: is required/],
        [goal(website, 'Sign Up'), /^body\.extraData\.eventName: must match pattern/],
        [goal(website, 'identify'), /^body\.extraData\.eventName: must match pattern/],
        [pageview(website, { type: 'custom', extraData: { plan: 'pro' } }), /^body\.extraData\.eventName: is required/],
        [goal(website, 'signup', { price: 99 }), /^body\.extraData\.price: must be string/],
        [goal(website, 'signup', { plan: 'x'.repeat(256) }), /^body\.extraData\.plan: must NOT have more than 255 characters/],
        [goal(website, 'signup', elevenProperties), /^body\.extraData: must have at most 10 properties besides eventName/],
        [goal(website, 'signup', { 'bad key': 'x' }), /^body\.extraData: property names must be/],
        [pageview(website, { type: 'identify', extraData: {} }), /^body\.extraData\.user_id: is required/],
        [pageview(website, { type: 'external_link', extraData: { url: 7 } }), /^body\.extraData\.url: must be string/],
      ];
      for (const [body, pattern] of cases) expectError(await send(t, body), 400, pattern);
      expectError(await send(t, null, { payload: '{"websiteId": ' }), 400, /not valid JSON/);
      expectError(await send(t, null, { payload: '' }), 400, /body\.websiteId: is required/);
      expect(await t.storedEvents(website.id)).toHaveLength(0);
    });

    it('answers 404 for an unknown website, by tracking id or by id', async () => {
      const { website } = await newWebsite(t);
      expectError(await send(t, pageview(website, { websiteId: 'dfid_doesnotexist0000000' })), 404, /Website not found/);
      expectError(await send(t, pageview(website, { websiteId: UNKNOWN_ID })), 404, /Website not found/);
    });

    it('answers 413 for a body over 16 KiB and stores nothing, while a body just under it is accepted', async () => {
      const { website } = await newWebsite(t);
      const base = JSON.stringify(pageview(website, { padding: '' })).length;
      const response = await send(t, pageview(website, { padding: 'x'.repeat(16 * 1024 - base + 1) }));
      expectError(response, 413, /too large/);
      expect(response.headers['access-control-allow-origin']).toBe('*');
      expect(await t.storedEvents(website.id)).toHaveLength(0);
      expectStored(await send(t, pageview(website, { padding: 'x'.repeat(16 * 1024 - base) })));
    });

    it('answers 415 for a body that is neither JSON nor text', async () => {
      const { website } = await newWebsite(t);
      expectError(await send(t, null, { contentType: 'application/x-www-form-urlencoded', payload: 'websiteId=x' }), 415);
      expect(await t.storedEvents(website.id)).toHaveLength(0);
    });
  });

  describe('CORS', () => {
    it('answers a preflight from any origin', async () => {
      const response = await t.app.inject({
        method: 'OPTIONS',
        url: '/api/events',
        headers: {
          origin: 'https://shop.example.org',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      });
      expect(response.statusCode).toBe(204);
      expect(response.headers['access-control-allow-origin']).toBe('*');
      expect(response.headers['access-control-allow-methods']).toContain('POST');
      expect(String(response.headers['access-control-allow-headers']).toLowerCase()).toContain('content-type');
    });

    it('lets the page read the drop reason and opens error answers too', async () => {
      const { website } = await newWebsite(t);
      const dropped = await send(t, pageview(website), { userAgent: GOOGLEBOT, headers: { origin: 'https://x.example.org' } });
      expect(dropped.headers['access-control-allow-origin']).toBe('*');
      expect(String(dropped.headers['access-control-expose-headers']).toLowerCase()).toContain('x-sightline-dropped');
      const notFound = await send(t, pageview(website, { websiteId: UNKNOWN_ID }));
      expect(notFound.headers['access-control-allow-origin']).toBe('*');
    });

    it('keeps the admin API closed to other origins', async () => {
      const response = await t.app.inject({
        method: 'OPTIONS',
        url: '/api/v1/admin/account',
        headers: { origin: 'https://x.example.org', 'access-control-request-method': 'GET' },
      });
      expect(response.headers['access-control-allow-origin']).toBeUndefined();
    });
  });

  describe('drops (200, X-Sightline-Dropped, nothing stored)', () => {
    it('drops bots by user agent, and requests without one', async () => {
      const { website } = await newWebsite(t);
      expectDropped(await send(t, pageview(website), { userAgent: GOOGLEBOT }), 'bot');
      expectDropped(await send(t, pageview(website), { userAgent: 'python-requests/2.31.0' }), 'bot');
      expectDropped(await send(t, pageview(website), { userAgent: 'Mozilla/5.0 HeadlessChrome/120.0.0.0' }), 'bot');
      expectDropped(await send(t, pageview(website), { userAgent: null }), 'bot');
      expect(await t.storedEvents(website.id)).toHaveLength(0);
    });

    it('drops excluded addresses and CIDR ranges, IPv4 and IPv6', async () => {
      const { website } = await newWebsite(t, { excludedIps: ['198.51.100.0/24', '2001:db8::1', '2001:db8:ff::/48'] });
      expectDropped(await send(t, pageview(website), { ip: '198.51.100.250' }), 'excluded-ip');
      expectDropped(await send(t, pageview(website), { ip: '::ffff:198.51.100.9' }), 'excluded-ip');
      expectDropped(await send(t, pageview(website), { ip: '2001:db8::1' }), 'excluded-ip');
      expectDropped(await send(t, pageview(website), { ip: '2001:db8:ff:1::5' }), 'excluded-ip');
      expect(await t.storedEvents(website.id)).toHaveLength(0);
      expectStored(await send(t, pageview(website), { ip: '203.0.113.5' }));
      expectStored(await send(t, pageview(website), { ip: '2001:db8::2' }));
      expect(await t.storedEvents(website.id)).toHaveLength(2);
    });

    it('ignores X-Forwarded-For when TRUST_PROXY is off', async () => {
      const { website } = await newWebsite(t, { excludedIps: ['192.0.2.1'] });
      expectStored(await send(t, pageview(website), { ip: '203.0.113.5', headers: { 'x-forwarded-for': '192.0.2.1' } }));
      expectDropped(await send(t, pageview(website), { ip: '192.0.2.1', headers: { 'x-forwarded-for': '203.0.113.5' } }), 'excluded-ip');
    });

    it('reads no country header without a proxy: a visitor cannot choose a country to slip past excludedCountries', async () => {
      const { website } = await newWebsite(t, { excludedCountries: ['DE'] });
      expectStored(await send(t, pageview(website), { headers: { 'cf-ipcountry': 'DE' } }));
      expect((await t.storedEvents(website.id)).map((r) => r.country)).toEqual([null]);
    });

    it('accepts only the domain, its www. form and the allowed host names', async () => {
      const { website } = await newWebsite(t, { allowedHostnames: ['*.shop.example.org', 'partner.example.net'] });
      for (const host of ['evil.example.net', `app.${website.domain}`, 'shop.example.org', `${website.domain}.evil.net`]) {
        expectDropped(await send(t, pageview(website, { href: `https://${host}/` })), 'hostname-not-allowed');
      }
      expect(await t.storedEvents(website.id)).toHaveLength(0);
      for (const host of [website.domain, `www.${website.domain}`, 'a.shop.example.org', 'a.b.shop.example.org', 'partner.example.net']) {
        expectStored(await send(t, pageview(website, { href: `https://${host.toUpperCase()}:8443/` })));
      }
      const hosts = (await t.storedEvents(website.id)).map((r) => r.hostname);
      expect(hosts).toEqual([website.domain, `www.${website.domain}`, 'a.shop.example.org', 'a.b.shop.example.org', 'partner.example.net']);
    });

    it('drops excluded host names, even when a wildcard allows them', async () => {
      const { account, website } = await newWebsite(t);
      await configure(t, account, website, {
        allowedHostnames: [`*.${website.domain}`, '*.example.org'],
        excludedHostnames: [`staging.${website.domain}`, '*.preview.example.org'],
      });
      expectDropped(await send(t, pageview(website, { href: `https://staging.${website.domain}/` })), 'excluded-hostname');
      expectDropped(await send(t, pageview(website, { href: 'https://pr-1.preview.example.org/' })), 'excluded-hostname');
      expect(await t.storedEvents(website.id)).toHaveLength(0);
      expectStored(await send(t, pageview(website, { href: `https://app.${website.domain}/` })));
      expectStored(await send(t, pageview(website, { href: 'https://preview.example.org/' })));
      expect(await t.storedEvents(website.id)).toHaveLength(2);
    });

    it('drops excluded paths, where * matches any run of characters', async () => {
      const { website } = await newWebsite(t, { excludedPaths: ['/admin/*', '/preview', '/*/draft'] });
      for (const path of ['/admin/users', '/admin/users/42', '/preview', '/posts/draft', '/a/b/draft']) {
        expectDropped(await send(t, pageview(website, { href: `https://${website.domain}${path}?x=1` })), 'excluded-path');
      }
      expect(await t.storedEvents(website.id)).toHaveLength(0);
      for (const path of ['/admin', '/previews', '/posts/draft-2']) {
        expectStored(await send(t, pageview(website, { href: `https://${website.domain}${path}` })));
      }
      expect((await t.storedEvents(website.id)).map((r) => r.path)).toEqual(['/admin', '/previews', '/posts/draft-2']);
    });

    it('drops a goal on an excluded path like any other event', async () => {
      const { website } = await newWebsite(t, { excludedPaths: ['/internal/*'] });
      expectDropped(await send(t, goal(website, 'signup', {}, { href: `https://${website.domain}/internal/x` })), 'excluded-path');
      expect(await t.storedEvents(website.id)).toHaveLength(0);
    });

    it('applies a settings change to the very next event', async () => {
      const { account, website } = await newWebsite(t);
      expectStored(await send(t, pageview(website, { href: `https://${website.domain}/beta` })));
      await configure(t, account, website, { excludedPaths: ['/beta'] });
      expectDropped(await send(t, pageview(website, { href: `https://${website.domain}/beta` })), 'excluded-path');
      await configure(t, account, website, { excludedPaths: null, excludedIps: [CLIENT_IP] });
      expectDropped(await send(t, pageview(website, { href: `https://${website.domain}/beta` })), 'excluded-ip');
      await configure(t, account, website, { excludedIps: [] });
      expectStored(await send(t, pageview(website, { href: `https://${website.domain}/beta` })));
      expect(await t.storedEvents(website.id)).toHaveLength(2);
    });
  });

  describe('cookieless websites', () => {
    it('derives a visitor id that is stable for one address and browser, and differs otherwise', async () => {
      const { website } = await newWebsite(t, { isCookieless: true });
      const { website: other } = await newWebsite(t, { isCookieless: true });
      const first = await send(t, pageview(website), { ip: '203.0.113.77' });
      const second = await send(t, goal(website, 'signup'), { ip: '203.0.113.77' });
      const otherBrowser = await send(t, pageview(website), { ip: '203.0.113.77', userAgent: IPHONE });
      const otherAddress = await send(t, pageview(website), { ip: '203.0.113.78' });
      const otherWebsite = await send(t, pageview(other), { ip: '203.0.113.77' });
      for (const response of [first, second, otherBrowser, otherAddress, otherWebsite]) expectStored(response);

      const ids = (await t.storedEvents(website.id)).map((r) => r.visitor_id);
      expect(ids).toEqual([first.body.visitorId, second.body.visitorId, otherBrowser.body.visitorId, otherAddress.body.visitorId]);
      expect(ids[0]).toBe(ids[1]);
      expect(new Set([ids[0], ids[2], ids[3], otherWebsite.body.visitorId]).size).toBe(4);
      expect(ids[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    });

    it('ignores the visitor id the browser sends, and needs none', async () => {
      const { website } = await newWebsite(t, { isCookieless: true });
      const sent = await send(t, pageview(website, { visitorId: randomUUID() }), { ip: '203.0.113.90' });
      const without = await send(t, pageview(website, { visitorId: undefined }), { ip: '203.0.113.90' });
      expectStored(sent);
      expectStored(without);
      expect(sent.body.visitorId).toBe(without.body.visitorId);
    });

    it('honours the SDK cookieless flag on a website that is not cookieless', async () => {
      const { website } = await newWebsite(t);
      const a = await send(t, pageview(website, { cookieless: true }), { ip: '203.0.113.91' });
      const b = await send(t, pageview(website, { cookieless: true }), { ip: '203.0.113.91' });
      expect(a.body.visitorId).toBe(b.body.visitorId);
    });

    it('stores no raw address anywhere, nor logs one', async () => {
      const { website } = await newWebsite(t, { isCookieless: true });
      const address = '203.0.113.199';
      const linesBefore = t.logLines.length;
      expectStored(await send(t, pageview(website), { ip: address }));
      expectStored(await send(t, goal(website, 'signup'), { ip: address }));
      const { website: plain } = await newWebsite(t);
      expectStored(await send(t, pageview(plain), { ip: address }));
      const stored = JSON.stringify([
        await t.storedEvents(website.id),
        await t.storedEvents(plain.id),
        await t.db.selectFrom('daily_salts').selectAll().execute(),
        await t.db.selectFrom('visitor_days').selectAll().execute(),
        await t.db.selectFrom('goal_visitors').selectAll().execute(),
      ]);
      expect(stored).toContain(website.id);
      expect(stored).not.toContain(address);
      // No line per event at info (the busiest route); the warn and error lines it may still write
      // (a 503) describe the request without the address.
      expect(t.logLines.slice(linesBefore).filter((line) => line.includes('/api/events'))).toEqual([]);
      expect(t.logLines.filter((line) => line.includes(address))).toEqual([]);
      const described = describeRequestWithoutAddress({ method: 'POST', url: '/api/events', ip: address, host: 'x' } as FastifyRequest);
      expect(JSON.stringify(described)).not.toContain(address);
    });
  });

  describe('daily salt', () => {
    it('creates a salt per day on first use, keeps it all day, and deletes days before yesterday', async () => {
      const day = (d: string) => Date.parse(`${d}T12:00:00.000Z`);
      let now = day('2001-03-01');
      const salts = new DailySalts(t.db, () => now);
      const first = await salts.current();
      expect(await salts.current()).toBe(first);
      // Another server process reads the same salt from the database.
      expect(await new DailySalts(t.db, () => now).current()).toBe(first);
      now = day('2001-03-02');
      const second = await salts.current();
      expect(second).not.toBe(first);
      const kept = await t.db.selectFrom('daily_salts').select('day').where('day', '<', '2002-01-01').orderBy('day').execute();
      expect(kept.map((r) => r.day)).toEqual(['2001-03-01', '2001-03-02']);
      now = day('2001-03-03');
      await salts.current();
      const after = await t.db.selectFrom('daily_salts').select('day').where('day', '<', '2002-01-01').orderBy('day').execute();
      expect(after.map((r) => r.day)).toEqual(['2001-03-02', '2001-03-03']);
      await t.db.deleteFrom('daily_salts').where('day', '<', '2002-01-01').execute();
    });

    it('gives the same visitor another id on another day', () => {
      const ua = CHROME;
      expect(cookielessVisitorId('salt-a', 'w', '203.0.113.1', ua)).toBe(cookielessVisitorId('salt-a', 'w', '203.0.113.1', ua));
      expect(cookielessVisitorId('salt-a', 'w', '203.0.113.1', ua)).not.toBe(cookielessVisitorId('salt-b', 'w', '203.0.113.1', ua));
    });
  });
}, { withPostgres: true });

describe('the country header of the configuration', () => {
  it('is cf-ipcountry behind a proxy, none without one, and whatever COUNTRY_HEADER names', () => {
    expect(loadConfig({}).countryHeader).toBeNull();
    expect(loadConfig({ TRUST_PROXY: '1' }).countryHeader).toBe('cf-ipcountry');
    expect(loadConfig({ TRUST_PROXY: '1', COUNTRY_HEADER: 'none' }).countryHeader).toBeNull();
    expect(loadConfig({ COUNTRY_HEADER: 'X-Country' }).countryHeader).toBe('x-country');
  });
});

describeEachEventEngine('browser ingestion behind Cloudflare', (engine) => {
  const t = useTestApp(engine, { trustProxy: true, countryHeader: loadConfig({ TRUST_PROXY: '1' }).countryHeader });

  it('drops excluded countries read from the cf-ipcountry header, and stores the others', async () => {
    const { website } = await newWebsite(t, { excludedCountries: ['DE'] });
    expectDropped(await send(t, pageview(website), { headers: { 'cf-ipcountry': 'DE' } }), 'excluded-country');
    expectDropped(await send(t, pageview(website), { headers: { 'cf-ipcountry': 'de' } }), 'excluded-country');
    expect(await t.storedEvents(website.id)).toHaveLength(0);
    expectStored(await send(t, pageview(website), { headers: { 'cf-ipcountry': 'fr' } }));
    expectStored(await send(t, pageview(website), { headers: { 'cf-ipcountry': 'XX' } }));
    expectStored(await send(t, pageview(website)));
    expect((await t.storedEvents(website.id)).map((r) => r.country)).toEqual(['FR', null, null]);
  });
});

describeEachEventEngine('browser ingestion behind a proxy', (engine) => {
  const t = useTestApp(engine, { trustProxy: true, countryHeader: 'x-country' });

  it('reads the client address from X-Forwarded-For when TRUST_PROXY is set', async () => {
    const { website } = await newWebsite(t, { excludedIps: ['192.0.2.0/24'] });
    expectDropped(await send(t, pageview(website), { ip: '10.0.0.1', headers: { 'x-forwarded-for': '192.0.2.44' } }), 'excluded-ip');
    expectStored(await send(t, pageview(website), { ip: '10.0.0.1', headers: { 'x-forwarded-for': '203.0.113.5' } }));
  });

  it('reads the country from the configured header only', async () => {
    const { website } = await newWebsite(t, { excludedCountries: ['US'] });
    expectDropped(await send(t, pageview(website), { headers: { 'x-country': 'US' } }), 'excluded-country');
    expectStored(await send(t, pageview(website), { headers: { 'cf-ipcountry': 'US', 'x-country': 'CA' } }));
    expectStored(await send(t, pageview(website), { headers: { 'cf-ipcountry': 'US' } }));
    expect((await t.storedEvents(website.id)).map((r) => r.country)).toEqual(['CA', null]);
  });
});
