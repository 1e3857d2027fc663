import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { type Server, createServer, request as httpRequest } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { type Browser, type BrowserContext, type BrowserContextOptions, type Page, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { type Db, createDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { loggerOptions } from '../src/http/logging.ts';
import { TEST_CONFIG_OVERRIDES } from './helpers/app.ts';
import { freePort } from './helpers/processes.ts';
import { type ReceivedMail, type SmtpInbox, startSmtpInbox } from './helpers/smtp-inbox.ts';

// The dashboard end to end, as a person uses it: Debian's Chromium (never a downloaded browser)
// drives the built dashboard (dist/web, built by the suite's global setup) served by Sightline
// listening on a real port, on a fresh SQLite database with no account, sending its mail to a
// real local SMTP server. One scenario, in order: first-run setup, a website, a real page view
// from the tracking snippet on the website's own domain, the analytics page, an API token, an
// invited viewer, a password reset, and deleting the website. Along the way every page is checked
// with axe-core, the analytics page is weighed and tried on a phone, no dashboard request leaves
// Sightline's origin, and, with SIGHTLINE_SCREENSHOTS=<dir>, every page is saved as a PNG.

const CHROMIUM = '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
// Headless Chromium says "HeadlessChrome", which the tracker's bot rules refuse: the tracked page
// is opened with a visitor's desktop Chrome user agent.
const DESKTOP_CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const SCREENSHOTS = process.env.SIGHTLINE_SCREENSHOTS || null;
const JS_BUDGET_BYTES = 150 * 1024;
const PHONE = { width: 390, height: 844 };
const require = createRequire(import.meta.url);
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const random = () => randomBytes(4).toString('hex');

/** Polls `probe` until it returns something other than undefined. */
async function waitFor<T>(probe: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

/** The one link to `${base}${path}#<token>` in a mail. */
function linkIn(mail: ReceivedMail, base: string, path: '/invite' | '/reset-password'): string {
  const links = mail.text.match(new RegExp(`${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}${path}#[A-Za-z0-9_-]+`, 'g')) ?? [];
  expect(links, mail.text).toHaveLength(1);
  return links[0]!;
}

/** A tiny website on another port: one page carrying the snippet the dashboard showed. */
async function startPageServer(): Promise<{ server: Server; port: number; setHead(head: string): void }> {
  let head = '';
  const server = createServer((_request, response) => {
    response
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end(`<!doctype html><html lang="en"><head><title>Pricing</title>${head}</head><body><h1>Pricing</h1></body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return { server, port: typeof address === 'object' && address ? address.port : 0, setHead: (value) => (head = value) };
}

/** The byte length of `url`'s body as sent with `Accept-Encoding: gzip` (undecoded), and its encoding. */
function gzipTransferSize(url: string): Promise<{ bytes: number; encoding: string | undefined }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { headers: { 'accept-encoding': 'gzip' } }, (response) => {
      let bytes = 0;
      response.on('data', (chunk: Buffer) => (bytes += chunk.length));
      response.on('end', () => resolve({ bytes, encoding: response.headers['content-encoding'] }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end();
  });
}

interface AxeViolation {
  page: string;
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/** Runs axe-core in the page; its serious and critical violations. */
async function axeViolations(page: Page, name: string): Promise<AxeViolation[]> {
  // The dashboard's CSP (script-src 'self') blocks the inline <script> page.addScriptTag() would
  // add; evaluating the source through the DevTools protocol is not subject to it.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const results = await (window as any).axe.run(document, { resultTypes: ['violations'] });
    return (results.violations as any[]).map((violation) => ({
      id: violation.id as string,
      impact: violation.impact as string | null,
      help: violation.help as string,
      targets: (violation.nodes as any[]).slice(0, 5).map((node) => `${(node.target as string[]).join(' ')}: ${node.failureSummary ?? ''}`.trim()),
    }));
  });
  return violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical').map((violation) => ({ page: name, ...violation }));
}

function describeViolations(violations: AxeViolation[]): string {
  return violations.map((v) => `[${v.page}] ${v.impact} ${v.id}: ${v.help}\n    ${v.targets.join('\n    ')}`).join('\n');
}

if (!haveChromium) {
  describe('the dashboard in Chromium', () => {
    it.skip(`skipped: no Debian Chromium at ${CHROMIUM} (apt-get install chromium; .ci/run installs it)`, () => {});
  });
}

describe.skipIf(!haveChromium)('the dashboard in Chromium', { timeout: 60_000 }, () => {
  const domain = `shop-${random()}.test`;
  const owner = { email: `owner-${random()}@example.test`, name: 'Olivia Owner', password: 'first password 123', newPassword: 'second password 456' };
  const member = { email: `member-${random()}@example.test`, name: 'Victor Viewer', password: 'viewer password 789' };

  let dir: string;
  let db: Db;
  let app: FastifyInstance;
  let base: string;
  let inbox: SmtpInbox;
  let site: Awaited<ReturnType<typeof startPageServer>>;
  let browser: Browser;
  const logLines: string[] = [];

  // Every dashboard context records what it asked for and what went wrong in its pages.
  const contexts: BrowserContext[] = [];
  const dashboardRequests: string[] = [];
  const pageErrors: string[] = [];
  const cspViolations: string[] = [];
  /** Every console error (a failed request's status shows here too), for the steps that expect none. */
  const consoleErrors: string[] = [];
  const axeFindings: AxeViolation[] = [];
  const checkedPages: string[] = [];
  let shot = 0;

  // State the steps share.
  let ownerPage: Page;
  let websiteId: string;
  let trackingId: string;
  let snippet: string;

  /** A browser context for the dashboard (never the tracked page's), watched as described above. */
  async function openDashboard(options: BrowserContextOptions = {}): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...options });
    contexts.push(context);
    context.on('request', (request) => dashboardRequests.push(request.url()));
    context.on('page', (page) => watch(page));
    const page = await context.newPage();
    return page;
  }

  function watch(page: Page): void {
    page.on('pageerror', (error) => pageErrors.push(`${page.url()}: ${error.message}`));
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) cspViolations.push(`${page.url()}: ${message.text()}`);
      if (message.type() === 'error') consoleErrors.push(`${page.url()}: ${message.text()}`);
    });
  }

  /** A new context signed in as the same account as `page` (a copy of its cookies, a cold cache). */
  async function sameAccount(page: Page, options: BrowserContextOptions = {}): Promise<Page> {
    return openDashboard({ ...options, storageState: await page.context().storageState() });
  }

  /** Checks the page as it is now with axe-core and saves a full-page screenshot when asked to. */
  async function checkpoint(page: Page, name: string): Promise<void> {
    await page.waitForLoadState('networkidle');
    checkedPages.push(name);
    axeFindings.push(...(await axeViolations(page, name)));
    if (SCREENSHOTS) {
      shot += 1;
      // A modal's backdrop covers the viewport only: a full-page capture would misplace it.
      const modal = await page.evaluate(() => document.querySelector('dialog[open]') !== null);
      await page.screenshot({ path: join(SCREENSHOTS, `${String(shot).padStart(2, '0')}-${name}.png`), fullPage: !modal });
    }
  }

  async function storedEvents() {
    return db.kysely.selectFrom('events').selectAll().where('website_id', '=', websiteId).execute();
  }

  /** Opens the analytics page and waits for its reports (the Top pages card listing /pricing). */
  async function openAnalytics(page: Page): Promise<void> {
    await page.goto(`${base}/websites/${websiteId}`);
    await page.getByRole('region', { name: 'Top pages' }).getByRole('button', { name: '/pricing' }).waitFor();
  }

  async function signIn(page: Page, email: string, password: string): Promise<void> {
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  // The steps share state: once one fails, the later ones are skipped rather than failing for it.
  let failedStep: string | null = null;
  function step(name: string, body: () => Promise<void>, timeout?: number): void {
    it(
      name,
      async (context) => {
        if (failedStep) context.skip(`an earlier step failed: ${failedStep}`);
        try {
          await body();
        } catch (error) {
          failedStep = name;
          throw error;
        }
      },
      timeout,
    );
  }

  beforeAll(async () => {
    if (SCREENSHOTS) mkdirSync(SCREENSHOTS, { recursive: true });
    dir = mkdtempSync(join(tmpdir(), 'sightline-dashboard-e2e-'));
    inbox = await startSmtpInbox();
    site = await startPageServer();

    db = createDatabase(`sqlite:${join(dir, 'sightline.db')}`);
    await migrateToLatest(db);
    // PUBLIC_URL (the links in mail) must be the real address, so the port is chosen first.
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const config = loadConfig(
      {},
      {
        ...TEST_CONFIG_OVERRIDES,
        databaseUrl: 'test',
        host: '127.0.0.1',
        port,
        publicUrl: base,
        smtpUrl: inbox.url,
        mailFrom: 'Sightline <sightline@example.test>',
        signInLimit: { perAccount: 1000, perAddress: 1000, windowMs: 60_000 },
      },
    );
    app = await buildApp({ config, db, logger: loggerOptions('warn', { write: (line: string) => logLines.push(line) }) });
    await app.listen({ host: '127.0.0.1', port });

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        // Headless Chromium reports navigator.webdriver = true, which the tracker's bot rules refuse.
        '--disable-blink-features=AutomationControlled',
        // The tracked page is served on the website's own domain, without DNS.
        `--host-resolver-rules=MAP ${domain} 127.0.0.1`,
      ],
      ignoreDefaultArgs: ['--enable-automation'],
    });
    ownerPage = await openDashboard();
  });

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => {});
    await browser?.close();
    await new Promise((resolve) => (site ? site.server.close(resolve) : resolve(undefined)));
    await app?.close();
    await db?.close();
    await inbox?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  step('walks a first visitor through the setup to the websites page', async () => {
    const page = ownerPage;
    const errorsBefore = consoleErrors.length;
    await page.goto(`${base}/`);
    await page.waitForURL(`${base}/setup`);
    await page.getByRole('heading', { level: 1, name: 'Welcome to Sightline' }).waitFor();
    await checkpoint(page, 'setup');
    // Asking who is signed in, before anyone is, is no failed request.
    expect(consoleErrors.slice(errorsBefore)).toEqual([]);

    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Name').fill(owner.name);
    await page.getByLabel('Password').fill(owner.password);
    await page.getByRole('button', { name: 'Create account' }).click();

    await page.waitForURL(`${base}/websites`);
    await page.getByRole('heading', { level: 1, name: 'Websites' }).waitFor();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    expect(await page.getByText(owner.email).isVisible()).toBe(true);
    await checkpoint(page, 'websites-empty');
  });

  step('opens signed out on the sign-in page with nothing in the console, a stale session cookie included', async () => {
    for (const staleCookie of [false, true]) {
      const page = await openDashboard();
      if (staleCookie) await page.context().addCookies([{ name: 'sightline_session', value: `dss_${'0'.repeat(43)}`, url: base }]);
      const errorsBefore = consoleErrors.length;
      await page.goto(`${base}/websites`);
      await page.waitForURL(`${base}/sign-in`);
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      await page.waitForLoadState('networkidle');
      expect(consoleErrors.slice(errorsBefore)).toEqual([]);
      // The ended session's cookie is cleared, so it is not sent again.
      expect((await page.context().cookies(base)).map((cookie) => cookie.name)).not.toContain('sightline_session');
      await page.context().close();
    }
  });

  step('adds a website and shows its tracking snippet', async () => {
    const page = ownerPage;
    await page.getByLabel('Domain').fill(domain);
    await page.getByLabel('Name').fill('Shop');
    await page.getByRole('button', { name: 'Add website' }).click();

    const box = page.getByRole('group', { name: `Tracking snippet for ${domain}` });
    await box.waitFor();
    snippet = (await box.locator('code').textContent()) ?? '';
    expect(snippet).toContain(`src="${base}/js/script.js"`);
    trackingId = /data-website-id="([^"]+)"/.exec(snippet)?.[1] ?? '';
    expect(trackingId).not.toBe('');

    const dashboardLink = page.getByRole('link', { name: 'Open its dashboard' });
    websiteId = /\/websites\/([^/?#]+)$/.exec((await dashboardLink.getAttribute('href')) ?? '')?.[1] ?? '';
    expect(websiteId).not.toBe('');
    await page.getByRole('list', { name: 'Your websites' }).getByRole('link', { name: 'Shop' }).waitFor();
    await checkpoint(page, 'websites-added');
  });

  step(
    'records a real page view from the snippet and shows it on the analytics page',
    async () => {
      // The snippet, exactly as the dashboard showed it, on the website's own domain.
      site.setHead(snippet);
      const visitor = await browser.newContext({ userAgent: DESKTOP_CHROME });
      try {
        const tracked = await visitor.newPage();
        await tracked.goto(`http://${domain}:${site.port}/pricing`);
        const [event] = await waitFor(async () => {
          const rows = await storedEvents();
          return rows.length > 0 ? rows : undefined;
        }, 'the page view to be stored');
        expect(event).toMatchObject({ type: 'pageview', hostname: domain, path: '/pricing' });
      } finally {
        await visitor.close();
      }

      const page = ownerPage;
      await page.getByRole('link', { name: 'Open its dashboard' }).click();
      await page.waitForURL(`${base}/websites/${websiteId}`);
      // The realtime count is read on load and every 30 s: reload rather than wait.
      await waitFor(async () => {
        await openAnalytics(page);
        const realtime = page.getByText(/current visitors?$|Current visitors unavailable/);
        await realtime.waitFor();
        return (await realtime.textContent()) === '1 current visitor' ? true : undefined;
      }, '"1 current visitor" on the analytics page', 20_000);

      const visitors = page.getByRole('region', { name: 'Overview' }).getByRole('button', { name: /^Unique visitors/ });
      await visitors.getByText('1', { exact: true }).waitFor();

      const chart = page.getByRole('img', { name: /Unique visitors.*: total 1\b/ });
      await chart.waitFor();
      expect(await chart.locator('canvas').count()).toBeGreaterThan(0);

      const pages = page.getByRole('region', { name: 'Top pages' });
      const pricingRow = pages.getByRole('row', { name: /\/pricing/ });
      expect(await pricingRow.getByRole('cell').first().textContent()).toBe('1');
      await checkpoint(page, 'analytics');

      await pages.getByRole('button', { name: '/pricing' }).click();
      await page.waitForURL((url) => url.searchParams.get('filter_page') === 'is:/pricing');
      expect(page.url()).toContain('filter_page=is%3A%2Fpricing');
      const chips = page.getByRole('group', { name: 'Active filters' });
      await chips.getByText('Page is /pricing').waitFor();
      await chips.getByRole('button', { name: 'Remove filter: Page is /pricing' }).waitFor();

      const filtered = page.url();
      await page.reload();
      await chips.getByText('Page is /pricing').waitFor();
      expect(page.url()).toBe(filtered);
      await pages.getByRole('button', { name: '/pricing' }).waitFor();
      await checkpoint(page, 'analytics-filtered');
    },
    90_000,
  );

  step('loads the analytics page with at most 150 KB of compressed JavaScript', async () => {
    // A new context with the owner's cookies: a cold cache, so every script is really fetched.
    const page = await sameAccount(ownerPage);
    const scripts = new Set<string>();
    page.on('response', (response) => {
      const type = response.headers()['content-type'] ?? '';
      if (response.request().resourceType() === 'script' || type.includes('javascript')) scripts.add(response.url());
    });
    await openAnalytics(page);
    await page.getByRole('img', { name: /total 1\b/ }).waitFor();

    expect(scripts.size).toBeGreaterThan(0);
    let total = 0;
    const sizes: string[] = [];
    for (const url of scripts) {
      const { bytes, encoding } = await gzipTransferSize(url);
      expect(encoding, url).toBe('gzip');
      total += bytes;
      sizes.push(`${url.replace(base, '')}: ${bytes}`);
    }
    expect(total, `gzipped JavaScript of the analytics page:\n${sizes.join('\n')}`).toBeLessThanOrEqual(JS_BUDGET_BYTES);
  });

  step('fits the analytics page on a phone without horizontal scrolling', async () => {
    const page = await sameAccount(ownerPage, { viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    await openAnalytics(page);
    await page.getByRole('img', { name: /total 1\b/ }).waitFor();
    const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(scrollWidth, 'document width on a 390 px wide screen').toBeLessThanOrEqual(PHONE.width + 1);
    await checkpoint(page, 'analytics-phone');
  });

  step('creates an API token that reads analytics, shows it once, and revokes it', async () => {
    const page = ownerPage;
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Account' }).click();
    await page.waitForURL(`${base}/account`);
    await page.getByRole('heading', { level: 1, name: 'Account' }).waitFor();
    await checkpoint(page, 'account');

    await page.getByRole('button', { name: 'New token' }).click();
    const form = page.locator('form').filter({ has: page.getByRole('heading', { name: 'New token' }) });
    await form.getByLabel('Name').fill('Reporting script');
    await form.getByLabel('Full access (*): everything your account may do').uncheck();
    // analytics:read is offered ticked, alone.
    const permissions = form.getByRole('group', { name: 'Permissions' });
    await permissions.getByLabel('analytics:read', { exact: true }).check();
    expect(await permissions.locator('input[type=checkbox]:checked').count()).toBe(1);
    await form.getByLabel('All websites, including those added later').uncheck();
    await form.getByLabel(`Shop (${domain})`).check();
    await checkpoint(page, 'account-new-token');
    await form.getByRole('button', { name: 'Create token' }).click();

    const secret = page.getByRole('group', { name: 'Token Reporting script' });
    await secret.waitFor();
    const token = ((await secret.locator('code').textContent()) ?? '').trim();
    expect(token).toMatch(/^dft_/);
    await checkpoint(page, 'account-token-shown');

    const overview = `${base}/api/v1/analytics/overview?websiteId=${websiteId}`;
    const read = await fetch(overview, { headers: { authorization: `Bearer ${token}` } });
    expect(read.status, await read.clone().text()).toBe(200);
    expect((await read.json()).data[0]).toMatchObject({ visitors: 1 });

    await page.getByRole('button', { name: 'I have copied it' }).click();
    await secret.waitFor({ state: 'detached' });
    const table = page.getByRole('region', { name: 'API tokens' });
    const row = table.getByRole('row', { name: /Reporting script/ });
    await row.waitFor();
    const displayKey = ((await row.locator('code').textContent()) ?? '').trim();
    expect(displayKey).not.toBe('');
    expect(displayKey).not.toBe(token);
    expect(await row.textContent()).toContain('analytics:read');
    expect(await row.textContent()).toContain(domain);
    expect(await page.evaluate(() => document.documentElement.outerHTML)).not.toContain(token);
    expect(await page.evaluate(() => document.body.innerText)).not.toContain(token);

    await row.getByRole('button', { name: 'Revoke Reporting script' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke the token "Reporting script"?' });
    await dialog.waitFor();
    await checkpoint(page, 'account-revoke-dialog');
    await dialog.getByRole('button', { name: 'Revoke token' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await row.waitFor({ state: 'detached' });
    await page.getByText('No token yet.').waitFor();

    const refused = await fetch(overview, { headers: { authorization: `Bearer ${token}` } });
    expect(refused.status).toBe(401);
  });

  step('shows the owner every settings section', async () => {
    const page = ownerPage;
    await page.goto(`${base}/websites/${websiteId}`);
    await page.getByRole('navigation', { name: 'Website sections' }).getByRole('link', { name: 'Settings' }).click();
    await page.waitForURL(`${base}/websites/${websiteId}/settings`);
    const sections = page.getByRole('navigation', { name: 'Settings sections' });
    // The sections appear once the website's settings have loaded.
    await sections.getByRole('link').first().waitFor();
    const names = (await sections.getByRole('link').allTextContents()).map((text) => text.trim());
    expect(names).toEqual(['General', 'API keys', 'Goals', 'Funnels', 'Alerts', 'Reports by mail', 'Team', 'Sharing', 'Integrations', 'Imports', 'Export', 'Delete website']);
    await page.getByRole('button', { name: 'Save settings' }).waitFor();
    for (const name of names) {
      await sections.getByRole('link', { name }).click();
      await expect.poll(() => sections.getByRole('link', { name }).getAttribute('aria-current')).toBe('page');
      await page.locator('.settings-body .card').first().waitFor();
      await checkpoint(page, `settings-${name.toLowerCase().replace(/\s+/g, '-')}`);
    }
  });

  step(
    'shows the rebuild of the statistics after a change of time zone, polling until it ends',
    async () => {
      const page = ownerPage;
      const polls: string[] = [];
      const derivedData = `${base}/api/v1/admin/websites/${websiteId}/derived-data`;
      page.on('request', (request) => {
        if (request.url() === derivedData) polls.push(request.url());
      });
      // Held, so the move recorded by the save stays under way until the worker runs again.
      await app.derivedDataWorker.stop();
      const line = page.getByRole('status').filter({ hasText: 'Rebuilding statistics' });
      try {
        await page.goto(`${base}/websites/${websiteId}/settings`);
        await page.getByRole('button', { name: 'Save settings' }).waitFor();
        // Read once on opening: ready, so nothing shows and nothing polls.
        await expect.poll(() => polls.length).toBe(1);
        expect(await line.count()).toBe(0);

        const zone = page.getByLabel('Time zone');
        const target = (await zone.inputValue()) === 'Asia/Tokyo' ? 'Pacific/Auckland' : 'Asia/Tokyo';
        await zone.selectOption(target);
        await page.getByRole('button', { name: 'Save settings' }).click();
        await page.getByText('Settings saved.').waitFor();
        await line.waitFor();
        const text = (await line.textContent()) ?? '';
        expect(text).toContain(`Rebuilding statistics for the new time zone (${target})`);
        expect(text).toMatch(/(: \d+\s?%)? — reports read the raw events meanwhile and may be slower\.$/);
        // Polled every 3 s while it rebuilds.
        const before = polls.length;
        await expect.poll(() => polls.length, { timeout: 10_000 }).toBeGreaterThan(before);
        expect(await line.isVisible()).toBe(true);
        await checkpoint(page, 'settings-general-rebuilding');
      } finally {
        app.derivedDataWorker.start();
      }
      await app.derivedDataWorker.settle();
      await line.waitFor({ state: 'detached', timeout: 10_000 });
      // Ready: the polling stops.
      const settled = polls.length;
      await sleep(3_500);
      expect(polls.length).toBe(settled);
      const answer = await page.request.get(derivedData);
      expect((await answer.json()).data[0]).toMatchObject({ state: 'ready', progress: null });
    },
    60_000,
  );

  step(
    'invites a viewer by e-mail, who joins through the link and can read but not change the website',
    async () => {
      const page = ownerPage;
      await page.goto(`${base}/websites/${websiteId}/settings?tab=team`);
      await page.getByRole('heading', { name: 'Invite someone' }).waitFor();
      await page.getByLabel('Email').fill(member.email);
      await page.getByLabel('Role').selectOption('viewer');
      await page.getByRole('button', { name: 'Invite', exact: true }).click();
      await page.getByRole('region', { name: 'Pending invitations' }).getByRole('cell', { name: member.email, exact: true }).waitFor();

      const mail = await inbox.nextMailTo(member.email);
      expect(mail.subject).toContain(domain);
      const link = linkIn(mail, base, '/invite');

      const viewer = await openDashboard();
      await viewer.goto(link);
      await viewer.getByRole('heading', { level: 1, name: `Join ${domain}` }).waitFor();
      await checkpoint(viewer, 'invite');
      await viewer.getByLabel('Your name').fill(member.name);
      await viewer.getByLabel('Choose a password').fill(member.password);
      await viewer.getByRole('button', { name: 'Accept the invitation' }).click();
      await viewer.waitForURL(`${base}/websites`);
      const card = viewer.getByRole('list', { name: 'Your websites' }).getByRole('listitem').filter({ hasText: domain });
      await card.getByRole('link', { name: 'Shop' }).waitFor();
      expect(await card.getByText('viewer', { exact: true }).isVisible()).toBe(true);
      await checkpoint(viewer, 'websites-viewer');

      await card.getByRole('link', { name: 'Shop' }).click();
      await viewer.getByRole('navigation', { name: 'Website sections' }).getByRole('link', { name: 'Settings' }).click();
      await viewer.getByText('You are a viewer of this website').waitFor();
      const sections = viewer.getByRole('navigation', { name: 'Settings sections' });
      expect(await sections.getByRole('link', { name: 'General' }).isVisible()).toBe(true);
      expect(await sections.getByRole('link', { name: 'Delete website' }).count()).toBe(0);
      expect(await viewer.getByRole('button', { name: 'Save settings' }).count()).toBe(0);
      expect(await viewer.getByLabel('Domain').isDisabled()).toBe(true);
      await checkpoint(viewer, 'settings-general-viewer');

      await sections.getByRole('link', { name: 'Team' }).click();
      await viewer.getByRole('region', { name: 'Team members' }).getByRole('cell', { name: member.email, exact: true }).waitFor();
      expect(await viewer.getByRole('heading', { name: 'Invite someone' }).count()).toBe(0);
      expect(await viewer.getByRole('button', { name: 'Invite', exact: true }).count()).toBe(0);
      expect(await viewer.getByRole('button', { name: /^Remove/ }).count()).toBe(0);
      await checkpoint(viewer, 'settings-team-viewer');

      // The server refuses the viewer too, whatever the page shows: a real write with the session.
      const answer = await viewer.evaluate(async (id) => {
        const session = await (await fetch('/api/v1/dashboard/session')).json();
        const response = await fetch(`/api/v1/admin/websites/${id}`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json', 'x-csrf-token': session.data[0].csrfToken },
          body: JSON.stringify({ name: 'Taken over' }),
        });
        return { status: response.status, body: await response.text() };
      }, websiteId);
      expect(answer.status, answer.body).toBe(403);
      expect(answer.body).not.toMatch(/csrf/i);
      const website = await db.kysely.selectFrom('websites').select('name').where('id', '=', websiteId).executeTakeFirstOrThrow();
      expect(website.name).toBe('Shop');
    },
    90_000,
  );

  step(
    'resets a forgotten password through the mailed link; the old password is refused',
    async () => {
      const page = await openDashboard();
      await page.goto(`${base}/forgot-password`);
      await page.getByRole('heading', { level: 1, name: 'Forgot your password?' }).waitFor();
      await checkpoint(page, 'forgot-password');
      await page.getByLabel('Email').fill(owner.email);
      await page.getByRole('button', { name: 'Send the link' }).click();
      await page.getByRole('status').filter({ hasText: /./ }).first().waitFor();

      const mail = await inbox.nextMailTo(owner.email);
      const link = linkIn(mail, base, '/reset-password');
      await page.goto(link);
      await page.getByRole('heading', { level: 1, name: 'Choose a new password' }).waitFor();
      await checkpoint(page, 'reset-password');
      await page.getByLabel('New password', { exact: true }).fill(owner.newPassword);
      await page.getByLabel('New password, again').fill(owner.newPassword);
      await page.getByRole('button', { name: 'Save the new password' }).click();

      await page.waitForURL(`${base}/sign-in`);
      await page.getByText('Your password was changed').waitFor();
      await checkpoint(page, 'sign-in');

      // Every session of the account ended, the owner's first browser's included.
      const before = await ownerPage.request.get(`${base}/api/v1/dashboard/sessions`);
      expect(before.status()).toBe(401);
      // Asked who is signed in, the ended session is no one.
      expect(await (await ownerPage.request.get(`${base}/api/v1/dashboard/session`)).json()).toEqual({ status: 'success', data: [] });

      await signIn(page, owner.email, owner.password);
      await page.getByRole('alert').filter({ hasText: 'The email or the password is wrong.' }).waitFor();
      expect(page.url()).toBe(`${base}/sign-in`);
      await checkpoint(page, 'sign-in-refused');

      await signIn(page, owner.email, owner.newPassword);
      await page.waitForURL(`${base}/websites`);
      await page.getByRole('list', { name: 'Your websites' }).getByRole('link', { name: 'Shop' }).waitFor();
      ownerPage = page;
    },
    60_000,
  );

  step('deletes the website with everything it recorded, after the domain is typed again', async () => {
    const page = ownerPage;
    await page.getByRole('list', { name: 'Your websites' }).getByRole('link', { name: 'Shop' }).click();
    await page.getByRole('navigation', { name: 'Website sections' }).getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('navigation', { name: 'Settings sections' }).getByRole('link', { name: 'Delete website' }).click();
    await page.getByRole('button', { name: 'Delete website…' }).click();

    const dialog = page.getByRole('dialog', { name: `Delete ${domain}?` });
    await dialog.waitFor();
    const confirm = dialog.getByRole('button', { name: 'Delete for good' });
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByLabel(`Type ${domain} to confirm`).fill(domain);
    expect(await confirm.isEnabled()).toBe(true);
    await checkpoint(page, 'settings-delete-dialog');
    await confirm.click();

    await page.waitForURL(`${base}/websites`);
    await page.getByText('No website yet').waitFor();
    expect(await page.getByRole('link', { name: 'Shop' }).count()).toBe(0);

    const read = await page.request.get(`${base}/api/v1/admin/websites/${websiteId}`);
    expect(read.status()).toBe(404);
    expect(await storedEvents()).toEqual([]);
  });

  step('passes axe-core on every page checked, without a serious or critical violation', async () => {
    expect(checkedPages.length).toBeGreaterThanOrEqual(20);
    expect(axeFindings, describeViolations(axeFindings)).toEqual([]);
  });

  it('never asks anything of another origin from a dashboard page, and raises no script or CSP error', () => {
    expect(dashboardRequests.length).toBeGreaterThan(0);
    expect(dashboardRequests.filter((url) => !url.startsWith(`${base}/`))).toEqual([]);
    expect(pageErrors).toEqual([]);
    expect(cspViolations).toEqual([]);
  });
});
