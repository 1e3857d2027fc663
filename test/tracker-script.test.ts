import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRACKER_HASHED_PATH } from '../src/plugins/tracker-script.ts';
import { Sightline } from './helpers/listening-sightline.ts';

// The served tracking script, run for real: Debian's Chromium (never a downloaded browser) loads a
// test page from one local server, the script from a listening Sightline on another, and the
// events it sends must land in Sightline's database. The page's host is the website's own domain,
// mapped to 127.0.0.1 inside Chromium (--host-resolver-rules), so the script runs on a real
// non-localhost host without DNS, and the website needs no extra allowed host names.

const CHROMIUM = '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
// Headless Chromium says "HeadlessChrome", which the SDK's bot rules (and ours, and the server's)
// refuse; a visitor's desktop Chrome is what the page should see.
const DESKTOP_CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const SESSION_ID = /^s[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const VISITOR_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function pageHtml(scriptTag: string, externalUrl: string): string {
  return `<!doctype html><html><head><title>Shop</title>
<script>window.datafast = window.datafast || function () { (window.datafast.q = window.datafast.q || []).push(arguments); };
window.datafast('early_goal', { plan: 'pro' });</script>
${scriptTag}
</head><body>
<button id="signup" data-fast-goal="signup" data-fast-goal-plan-name="team">Sign up</button>
<a id="docs" href="${externalUrl}">Read the docs</a>
</body></html>`;
}

interface PageServer {
  server: Server;
  port: number;
  html: string;
}

async function startPageServer(): Promise<PageServer> {
  const state = { html: '' } as PageServer;
  state.server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(state.html);
  });
  await new Promise<void>((resolve) => state.server.listen(0, '127.0.0.1', resolve));
  const address = state.server.address();
  state.port = typeof address === 'object' && address ? address.port : 0;
  return state;
}

if (!haveChromium) {
  describe('the tracking script in Chromium', () => {
    it.skip(`skipped: no Debian Chromium at ${CHROMIUM} (apt-get install chromium; .ci/run installs it)`, () => {});
  });
}

describe.skipIf(!haveChromium)('the tracking script in Chromium', () => {
  const sightline = new Sightline();
  let dir: string;
  let pages: PageServer;
  let browser: Browser;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sightline-tracker-'));
    await sightline.start(`sqlite:${join(dir, 'test.db')}`);
    pages = await startPageServer();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
        // Headless Chromium reports navigator.webdriver = true, which the bot rules refuse.
        '--disable-blink-features=AutomationControlled',
        `--host-resolver-rules=MAP ${sightline.site.website.domain} 127.0.0.1`],
      ignoreDefaultArgs: ['--enable-automation'],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => pages?.server.close(resolve));
    await sightline.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A fresh browser context that records every URL the page asks for. */
  async function openContext(userAgent = DESKTOP_CHROME): Promise<{ context: BrowserContext; requested: string[] }> {
    const context = await browser.newContext({ userAgent });
    const requested: string[] = [];
    context.on('request', (request) => requested.push(request.url()));
    return { context, requested };
  }

  async function storedEvents(count: number) {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const rows = await sightline.db.kysely
        .selectFrom('events')
        .selectAll()
        .where('website_id', '=', sightline.site.website.id)
        .orderBy('occurred_at')
        .execute();
      if (rows.length >= count || Date.now() > deadline) return rows;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it('sends the page view, goals, an SPA navigation and an outbound click, to the two local servers only', async () => {
    const { website, baseUrl } = sightline.site;
    const sightlinePort = new URL(baseUrl).port;
    const externalUrl = `${baseUrl}/healthz`;
    pages.html = pageHtml(`<script defer data-website-id="${website.trackingId}" src="${baseUrl}/js/script.js"></script>`, externalUrl);
    const { context, requested } = await openContext();
    const page = await context.newPage();
    const pageOrigin = `http://${website.domain}:${pages.port}`;

    await page.goto(`${pageOrigin}/pricing?utm_source=newsletter`);
    await page.waitForFunction(() => typeof (window as any).datafast === 'function' && (window as any).datafast.visitorId);
    await page.click('#signup');
    await page.evaluate(() => (window as any).datafast('checkout_started', { amount: 42 }));
    await page.evaluate(() => history.pushState({}, '', '/features'));
    await expect.poll(async () => (await storedEvents(5)).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(5);
    await Promise.all([page.waitForURL(externalUrl), page.click('#docs')]);

    const rows = await storedEvents(6);
    const byType = (type: string, name: string | null = null) => rows.filter((row) => row.type === type && row.name === name);
    const metadata = (row: { metadata: unknown }) => (typeof row.metadata === 'string' ? JSON.parse(row.metadata) : row.metadata);

    const [landing, features] = byType('pageview');
    expect(byType('pageview')).toHaveLength(2);
    expect(landing).toMatchObject({ hostname: website.domain, path: '/pricing', source: 'browser', browser: 'Chrome' });
    expect(features).toMatchObject({ hostname: website.domain, path: '/features' });
    // The second page's referrer is the first page (the SDK's rule for screens); it is on the
    // website's own host, so it is stored as no referrer or as that host, never another site.
    expect(features!.referrer ?? website.domain).toContain(website.domain);

    expect(byType('custom', 'early_goal')).toHaveLength(1);
    expect(metadata(byType('custom', 'early_goal')[0]!)).toEqual({ plan: 'pro' });
    expect(byType('custom', 'signup')).toHaveLength(1);
    expect(metadata(byType('custom', 'signup')[0]!)).toEqual({ plan_name: 'team' });
    expect(byType('custom', 'checkout_started')).toHaveLength(1);
    expect(metadata(byType('custom', 'checkout_started')[0]!)).toEqual({ amount: '42' });

    const outbound = byType('external_link');
    expect(outbound).toHaveLength(1);
    expect(metadata(outbound[0]!)).toMatchObject({ url: externalUrl, text: 'Read the docs' });
    expect(outbound[0]).toMatchObject({ path: '/features' });

    // One visitor and one session, with the SDK's id formats, kept in the SDK's cookies.
    expect(new Set(rows.map((row) => row.visitor_id)).size).toBe(1);
    expect(new Set(rows.map((row) => row.session_id)).size).toBe(1);
    expect(rows[0]!.visitor_id).toMatch(VISITOR_ID);
    expect(rows[0]!.session_id).toMatch(SESSION_ID);
    const cookies = await context.cookies(pageOrigin);
    expect(cookies.find((cookie) => cookie.name === 'datafast_visitor_id')?.value).toBe(rows[0]!.visitor_id);
    expect(cookies.find((cookie) => cookie.name === 'datafast_session_id')?.value).toBe(rows[0]!.session_id);

    const origins = new Set(requested.map((url) => new URL(url).port));
    expect([...origins].sort()).toEqual([String(pages.port), sightlinePort].sort());
    expect(requested.every((url) => ['127.0.0.1', website.domain].includes(new URL(url).hostname))).toBe(true);
    await context.close();
  });

  it('tracks nothing for a headless user agent, nor on localhost without data-allow-localhost', async () => {
    const { website, baseUrl } = sightline.site;
    const before = (await storedEvents(0)).length;
    pages.html = pageHtml(`<script defer data-website-id="${website.trackingId}" src="${baseUrl}/js/script.js"></script>`, 'https://example.org/');

    const headless = await openContext(`${DESKTOP_CHROME.replace('Chrome/', 'HeadlessChrome/')}`);
    const botPage = await headless.context.newPage();
    await botPage.goto(`http://${website.domain}:${pages.port}/`);
    await botPage.waitForFunction(() => (window as any).datafast && !(window as any).datafast.q);
    await botPage.evaluate(() => (window as any).datafast('signup'));

    const local = await openContext();
    const localPage = await local.context.newPage();
    await localPage.goto(`http://localhost:${pages.port}/`);
    await localPage.waitForFunction(() => (window as any).datafast && !(window as any).datafast.q);
    await localPage.evaluate(() => (window as any).datafast('signup'));

    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(headless.requested.concat(local.requested).filter((url) => url.includes('/api/events'))).toEqual([]);
    expect((await storedEvents(0)).length).toBe(before);
    await headless.context.close();
    await local.context.close();
  });

  it('says in the console why it does not track, or why the server kept nothing, with data-debug', async () => {
    const { website, baseUrl } = sightline.site;
    const tag = (extra: string) => `<script defer data-website-id="${website.trackingId}" data-debug ${extra} src="${baseUrl}/js/script.js"></script>`;
    const said = async (userAgent: string, url: string, extra = '', until = /\[Sightline\]/) => {
      pages.html = pageHtml(tag(extra), 'https://example.org/');
      const { context } = await openContext(userAgent);
      const page = await context.newPage();
      const lines: string[] = [];
      page.on('console', (message) => lines.push(message.text()));
      await page.goto(url);
      await expect.poll(() => lines.find((line) => until.test(line)), { timeout: 10_000 }).toBeDefined();
      await context.close();
      return lines.find((line) => until.test(line));
    };
    const headless = DESKTOP_CHROME.replace('Chrome/', 'HeadlessChrome/');
    expect(await said(headless, `http://${website.domain}:${pages.port}/`)).toBe(
      '[Sightline] not tracking: an automated browser or bot (the user agent contains "headlesschrome")',
    );
    expect(await said(DESKTOP_CHROME, `http://localhost:${pages.port}/`)).toBe('[Sightline] not tracking: localhost or file://');
    // Tracked on localhost, but the website does not allow that host name: the server says so.
    expect(await said(DESKTOP_CHROME, `http://localhost:${pages.port}/`, 'data-allow-localhost', /did not store/)).toBe(
      '[Sightline] the server did not store the event: hostname-not-allowed',
    );
  });
});

describe('serving the tracking script', () => {
  const sightline = new Sightline();
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sightline-tracker-http-'));
    await sightline.start(`sqlite:${join(dir, 'test.db')}`);
  });
  afterAll(async () => {
    await sightline.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers with a content-hash ETag, a short cache and 304 when unchanged', async () => {
    const first = await fetch(`${sightline.site.baseUrl}/js/script.js`);
    const text = await first.text();
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toMatch(/^application\/javascript/);
    expect(first.headers.get('cache-control')).toBe('public, max-age=3600');
    expect(first.headers.get('access-control-allow-origin')).toBe('*');
    expect(text).toContain('/api/events');
    expect(text.length).toBeLessThan(16 * 1024);
    const etag = first.headers.get('etag')!;
    expect(TRACKER_HASHED_PATH).toBe(`/js/script.${etag.replace(/"/g, '')}.js`);

    const again = await fetch(`${sightline.site.baseUrl}/js/script.js`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect(again.headers.get('etag')).toBe(etag);

    const stale = await fetch(`${sightline.site.baseUrl}/js/script.js`, { headers: { 'if-none-match': '"0000"' } });
    expect(stale.status).toBe(200);
  });

  it('serves the same bytes under the hashed name, immutable, and 404 for another hash', async () => {
    const plain = await (await fetch(`${sightline.site.baseUrl}/js/script.js`)).text();
    const hashed = await fetch(`${sightline.site.baseUrl}${TRACKER_HASHED_PATH}`);
    expect(hashed.status).toBe(200);
    expect(await hashed.text()).toBe(plain);
    expect(hashed.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await fetch(`${sightline.site.baseUrl}/js/script.0123456789abcdef.js`)).status).toBe(404);
  });

  it('stays out of the OpenAPI document and the info log', async () => {
    const document = await (await fetch(`${sightline.site.baseUrl}/openapi.json`)).json();
    expect(Object.keys(document.paths ?? {}).filter((path) => path.startsWith('/js/'))).toEqual([]);
    sightline.logLines.length = 0;
    await fetch(`${sightline.site.baseUrl}/js/script.js`);
    expect(sightline.logLines.filter((line) => line.includes('/js/script.js'))).toEqual([]);
  });
});
