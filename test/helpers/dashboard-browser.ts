import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { type Browser, type BrowserContextOptions, type Page, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import { type Db, createDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { loggerOptions } from '../../src/http/logging.ts';
import { hashPassword } from '../../src/auth/passwords.ts';
import { createAccountWithToken } from '../../src/modules/account/account.service.ts';
import { TEST_CONFIG_OVERRIDES } from './app.ts';
import { CHROME, CLIENT_IP } from './browser-events.ts';
import { sessionCookieOf } from './dashboard-session.ts';
import { freePort } from './processes.ts';

// What the dashboard's browser tests share: Debian's Chromium (never a downloaded browser) driving
// the built dashboard (dist/web, built by the suite's global setup) served by Sightline listening
// on a real port, on a fresh SQLite database; axe-core; screenshots with SIGHTLINE_SCREENSHOTS.

export const CHROMIUM = '/usr/bin/chromium';
export const haveChromium = existsSync(CHROMIUM);
export const PHONE = { width: 390, height: 844 };
export const DESKTOP = { width: 1280, height: 800 };
export const SCREENSHOTS = process.env.SIGHTLINE_SCREENSHOTS || null;
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Registers, when Chromium is missing, a skipped test that says why (the suite's own is then skipped). */
export function sayWhenChromiumIsMissing(name: string): void {
  if (haveChromium) return;
  describe(name, () => {
    it.skip(`skipped: no Debian Chromium at ${CHROMIUM} (apt-get install chromium; .ci/run installs it)`, () => {});
  });
}

/** axe-core's serious and critical violations in the page as it is now. */
export async function axeViolations(page: Page): Promise<string[]> {
  // The dashboard's CSP (script-src 'self') blocks an inline <script>; evaluating through the
  // DevTools protocol is not subject to it.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const results = await (window as any).axe.run(document, { resultTypes: ['violations'] });
    return (results.violations as any[]).map((violation) => ({
      id: violation.id as string,
      impact: violation.impact as string | null,
      targets: (violation.nodes as any[]).slice(0, 5).map((node) => `${(node.target as string[]).join(' ')}: ${node.failureSummary ?? ''}`),
    }));
  });
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.impact} ${violation.id}\n    ${violation.targets.join('\n    ')}`);
}

/** Saves the page as SIGHTLINE_SCREENSHOTS/<name>.png when that is set. */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (!SCREENSHOTS) return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  const modal = await page.evaluate(() => document.querySelector('dialog[open]') !== null);
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: !modal });
}

export interface Answer {
  status: number;
  text: string;
  json: any;
  setCookie: string[];
  type: string | null;
}

export type Auth = { cookie: string; csrfToken: string } | { key: string };

/** A website as its creation answers it. */
export interface SetUpWebsite {
  id: string;
  domain: string;
  trackingId: string;
  currency: string;
}

export interface DashboardServer {
  /** http://127.0.0.1:<port>, also the server's PUBLIC_URL. */
  readonly base: string;
  readonly app: FastifyInstance;
  readonly db: Db;
  readonly browser: Browser;
  readonly logLines: string[];
  /** Uncaught errors of every page opened with `page`. */
  readonly pageErrors: string[];
  /** A real request; a session auth signs it in as the dashboard does, a key as an API client. */
  call(method: string, path: string, body?: unknown, auth?: Auth, headers?: Record<string, string>): Promise<Answer>;
  /** An event as the datafast SDK posts it to /api/events, from a visitor's address and browser; fails unless accepted. */
  track(body: unknown, from?: { ip?: string; userAgent?: string }): Promise<void>;
  /**
   * The owner set up through the dashboard (signed in: cookie and CSRF token) and a new website
   * "Shop" in Europe/Paris on a fresh domain; fails unless both are accepted.
   */
  ownerWithWebsite(): Promise<{ owner: { cookie: string; csrfToken: string }; website: SetUpWebsite }>;
  /** A new account, made a `role` of the website and signed in: its session cookie. */
  memberSession(websiteId: string, role: 'viewer' | 'member'): Promise<string>;
  /** A page signed in with the session cookie given. */
  page(cookie: string, options?: { viewport?: { width: number; height: number } } & BrowserContextOptions): Promise<Page>;
}

/**
 * Starts Sightline and Chromium before the suite's tests (in a `describe.skipIf(!haveChromium)`)
 * and stops both after; the fields are there once the tests run.
 */
export function useDashboardServer(prefix: string, overrides: Partial<Config> = {}): DashboardServer {
  const state = { logLines: [] as string[], pageErrors: [] as string[] } as {
    dir: string;
    base: string;
    app: FastifyInstance;
    db: Db;
    browser: Browser;
    logLines: string[];
    pageErrors: string[];
  };

  beforeAll(async () => {
    state.dir = mkdtempSync(join(tmpdir(), `sightline-${prefix}-`));
    state.db = createDatabase(`sqlite:${join(state.dir, 'sightline.db')}`);
    await migrateToLatest(state.db);
    // Addresses the dashboard shows (webhook URLs, flags) are built on PUBLIC_URL: the real one, port chosen first.
    const port = await freePort();
    state.base = `http://127.0.0.1:${port}`;
    const config = loadConfig({}, { ...TEST_CONFIG_OVERRIDES, databaseUrl: 'test', host: '127.0.0.1', port, publicUrl: state.base, ...overrides });
    state.app = await buildApp({ config, db: state.db, logger: loggerOptions('warn', { write: (line: string) => state.logLines.push(line) }) });
    await state.app.listen({ host: '127.0.0.1', port });
    state.browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  });

  afterAll(async () => {
    await state.browser?.close();
    await state.app?.close();
    await state.db?.close();
    if (state.dir) rmSync(state.dir, { recursive: true, force: true });
  });

  return {
    get base() {
      return state.base;
    },
    get app() {
      return state.app;
    },
    get db() {
      return state.db;
    },
    get browser() {
      return state.browser;
    },
    logLines: state.logLines,
    pageErrors: state.pageErrors,
    async call(method, path, body, auth, headers = {}) {
      const sent: Record<string, string> = { ...headers };
      if (body !== undefined) sent['content-type'] = 'application/json';
      if (auth && 'key' in auth) sent.authorization = `Bearer ${auth.key}`;
      else if (auth) Object.assign(sent, { cookie: auth.cookie, 'x-csrf-token': auth.csrfToken });
      const response = await fetch(`${state.base}${path}`, { method, headers: sent, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await response.text();
      let json: any = null;
      try {
        json = JSON.parse(text || 'null');
      } catch {
        json = null;
      }
      return { status: response.status, text, json, setCookie: response.headers.getSetCookie(), type: response.headers.get('content-type') };
    },
    async track(body, from = {}) {
      const response = await state.app.inject({
        method: 'POST',
        url: '/api/events',
        remoteAddress: from.ip ?? CLIENT_IP,
        headers: { 'content-type': 'application/json', 'user-agent': from.userAgent ?? CHROME },
        payload: JSON.stringify(body),
      });
      if (response.statusCode >= 300) throw new Error(`the event was refused: ${response.statusCode} ${response.body}`);
    },
    async ownerWithWebsite() {
      const suffix = randomBytes(4).toString('hex');
      const setup = await this.call('POST', '/api/v1/dashboard/setup', { email: `owner-${suffix}@example.test`, name: 'Olivia Owner', password: 'owner password 123' });
      if (setup.status !== 200) throw new Error(`the owner's setup failed: ${setup.status} ${setup.text}`);
      const owner = { cookie: sessionCookieOf(setup.setCookie), csrfToken: setup.json.data[0].csrfToken as string };
      const created = await this.call('POST', '/api/v1/admin/websites', { domain: `shop-${suffix}.test`, timezone: 'Europe/Paris', name: 'Shop' }, owner);
      if (created.status !== 200) throw new Error(`creating the website failed: ${created.status} ${created.text}`);
      return { owner, website: created.json.data[0] as SetUpWebsite };
    },
    async memberSession(websiteId, role) {
      const email = `${role}-${randomBytes(4).toString('hex')}@example.test`;
      const password = `${role} password 456`;
      const { account } = await createAccountWithToken(state.db.kysely, email, `A ${role}`);
      await state.db.kysely.updateTable('accounts').set({ password_hash: await hashPassword(password) }).where('id', '=', account.id).execute();
      await state.db.kysely.insertInto('website_members').values({ website_id: websiteId, account_id: account.id, role, created_at: new Date().toISOString() }).execute();
      const signIn = await this.call('POST', '/api/v1/dashboard/sign-in', { email, password });
      if (signIn.status !== 200) throw new Error(`signing in the ${role} failed: ${signIn.status} ${signIn.text}`);
      return sessionCookieOf(signIn.setCookie);
    },
    async page(cookie, options = {}) {
      const { viewport = DESKTOP, ...rest } = options;
      const context = await state.browser.newContext({ viewport, ...rest });
      const [name, value] = cookie.split(/=(.*)/s) as [string, string];
      await context.addCookies([{ name, value, url: state.base }]);
      const page = await context.newPage();
      page.on('pageerror', (error) => state.pageErrors.push(`${page.url()}: ${error.message}`));
      return page;
    },
  };
}
