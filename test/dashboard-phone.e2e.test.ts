import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../src/auth/passwords.ts';
import { createAccountWithToken } from '../src/modules/account/account.service.ts';
import type { NewEvent } from '../src/modules/events/event.types.ts';
import { PHONE, axeViolations, haveChromium, sayWhenChromiumIsMissing, screenshot as saveScreenshot, useDashboardServer } from './helpers/dashboard-browser.ts';
import { sessionCookieOf } from './helpers/dashboard-session.ts';
import { newEvent } from './helpers/factories.ts';

// The dashboard on a 390 px wide phone, and the details that looked wrong (issue 35, items 6 and
// 7), in a real browser: Debian's Chromium (never a downloaded browser) drives the built
// dashboard (dist/web, built by the suite's global setup) served by Sightline on a real port, on
// a fresh SQLite database without mail. The owner, the website and a year of page views from seven
// countries (six of them with no known region) are made through the API and the event writer;
// then, on the phone: every row's buttons in the tables of sessions, tokens, API keys, goals and
// the team stay on the screen, a long invitation message wraps, the details dialog keeps
// "Netherlands" whole, flags are the SVGs Sightline serves, the 12-month axis names months, "All
// time" reaches back to the first note (and charts a one-day website by hour), an unknown path
// shows the app's own page with a 404, and a refused password reads as a sentence at its field.
// axe-core runs on each state; SIGHTLINE_SCREENSHOTS=<dir> saves each one as a PNG.

const random = () => randomBytes(4).toString('hex');
const PASSWORD = 'owner password 123';

/** The buttons of the tables' rows, as their visible text starts. */
const ROW_BUTTON = /^(Edit|Reset|Roll|Revoke|Remove|Sign out|Cancel invitation)\b/;

/** The first day of the month `back` months before `now`'s, at noon UTC on day `day`. */
function monthDay(now: Date, back: number, day: number): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, day, 12));
}

sayWhenChromiumIsMissing('the dashboard on a phone, in Chromium');

describe.skipIf(!haveChromium)('the dashboard on a phone, in Chromium', () => {
  const server = useDashboardServer('phone-e2e', { signInLimit: { perAccount: 1000, perAddress: 1000, windowMs: 60_000 } });
  const call = server.call;
  let owner: { cookie: string; csrfToken: string };
  let websiteId: string;
  let youngWebsiteId: string;
  let shot = 0;

  async function ok(method: string, path: string, body?: unknown) {
    const answer = await call(method, path, body, owner);
    expect(answer.status, `${method} ${path}: ${answer.text}`).toBe(200);
    return answer.json;
  }

  /** A phone (or, with `viewport`, a desktop) page signed in as the owner. */
  async function ownerPage(viewport = PHONE): Promise<Page> {
    const phone = viewport.width === PHONE.width;
    return server.page(owner.cookie, { viewport, isMobile: phone, hasTouch: phone });
  }

  async function screenshot(page: Page, name: string): Promise<void> {
    shot += 1;
    await saveScreenshot(page, `phone-${String(shot).padStart(2, '0')}-${name}`);
  }

  /** Every row button of the tables in the page is on the screen, and the page does not scroll sideways. */
  async function expectRowButtonsOnScreen(page: Page, what: string, atLeast: number): Promise<void> {
    await page.waitForLoadState('networkidle');
    const buttons = page.locator('.table-wrap button').filter({ hasText: ROW_BUTTON });
    const count = await buttons.count();
    expect(count, `${what}: row buttons`).toBeGreaterThanOrEqual(atLeast);
    for (let index = 0; index < count; index++) {
      const button = buttons.nth(index);
      const label = `${what}: ${(await button.textContent())?.trim()}`;
      expect(await button.isVisible(), label).toBe(true);
      const box = (await button.boundingBox())!;
      expect(box.x, label).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width, label).toBeLessThanOrEqual(PHONE.width);
    }
    expect(await page.evaluate(() => document.documentElement.scrollWidth), `${what}: page width`).toBeLessThanOrEqual(PHONE.width);
  }

  beforeAll(async () => {
    // The owner (the first-run setup signs in), two more of their sessions, a website.
    const email = `owner-${random()}@example.test`;
    const setup = await call('POST', '/api/v1/dashboard/setup', { email, name: 'Olivia Owner', password: PASSWORD });
    expect(setup.status, setup.text).toBe(200);
    owner = { cookie: sessionCookieOf(setup.setCookie), csrfToken: setup.json.data[0].csrfToken as string };
    for (const agent of ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Safari/604.1', 'Mozilla/5.0 (Windows NT 10.0) Firefox/130.0']) {
      const signIn = await call('POST', '/api/v1/dashboard/sign-in', { email, password: PASSWORD }, undefined, { 'user-agent': agent });
      expect(signIn.status, signIn.text).toBe(200);
    }
    websiteId = (await ok('POST', '/api/v1/admin/websites', { domain: `shop-${random()}.test`, timezone: 'Europe/Paris', name: 'Shop' })).data[0].id;
    youngWebsiteId = (await ok('POST', '/api/v1/admin/websites', { domain: `young-${random()}.test`, timezone: 'Europe/Paris', name: 'Young' })).data[0].id;

    // A year of page views, one day a month: seven visitors a day, from the Netherlands (one in a
    // known region and city, one not), Germany, France, the United States, the United Kingdom and
    // Japan, where no region is known. A few goals besides.
    const now = new Date();
    const events: NewEvent[] = [];
    for (let back = 0; back < 12; back++) {
      let at = monthDay(now, back, 15);
      if (at.getTime() > now.getTime() - 3_600_000) at = new Date(now.getTime() - 3_600_000);
      const visitors: Array<[string, string | null, string | null]> = [
        ['NL', 'North Holland', 'Amsterdam'],
        ['NL', null, null],
        ['DE', null, null],
        ['FR', null, null],
        ['US', null, null],
        ['GB', null, null],
        ['JP', null, null],
      ];
      visitors.forEach(([country, region, city], index) => {
        const visitor = `v-${back}-${index}`;
        events.push(newEvent(websiteId, visitor, { country, path: '/pricing', occurredAt: at.toISOString(), details: { region, city } }));
      });
      for (const goal of ['signup', 'newsletter', 'checkout_completed']) {
        events.push(newEvent(websiteId, `v-${back}-0`, { type: 'custom', name: goal, country: 'NL', occurredAt: at.toISOString(), details: { region: 'North Holland', city: 'Amsterdam' } }));
      }
    }
    // The young website: two page views today, nothing before.
    for (const hoursAgo of [1, 3]) {
      events.push(newEvent(youngWebsiteId, `young-${hoursAgo}`, { country: 'NL', occurredAt: new Date(now.getTime() - hoursAgo * 3_600_000).toISOString() }));
    }
    await (server.app as any).events.write(events);
    await (server.app as any).events.flush();

    // Three notes, the first a month before the first page view.
    for (const [text, at] of [
      ['Beta launched', monthDay(now, 12, 20)],
      ['Pricing page redesigned', monthDay(now, 6, 3)],
      ['Newsletter sent', new Date(now.getTime() - 2 * 3_600_000)],
    ] as const) {
      await ok('POST', `/api/v1/admin/websites/${websiteId}/notes`, { text, timestamp: at.toISOString() });
    }
    await ok('POST', `/api/v1/admin/websites/${youngWebsiteId}/notes`, { text: 'Snippet installed', timestamp: new Date(now.getTime() - 2 * 3_600_000).toISOString() });

    // Three API keys, three account tokens, a member and two pending invitations.
    const keys: string[] = [];
    for (const name of ['Backend server', 'Billing worker', 'Nightly export']) keys.push((await ok('POST', `/api/v1/admin/websites/${websiteId}/apikeys`, { name })).data[0].key);
    // A payment of the Dutch visitor, so the details show a third column, Revenue.
    const payment = await fetch(`${server.base}/api/v1/payments?websiteId=${websiteId}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys[0]}`, 'content-type': 'application/json' },
      body: JSON.stringify({ amount: 12345.5, currency: 'USD', transaction_id: 'txn-phone-1', datafast_visitor_id: 'v-0-0' }),
    });
    expect(payment.status, await payment.text()).toBe(200);
    for (const name of ['Deploy script', 'Grafana dashboard', 'Claude agent']) await ok('POST', '/api/v1/admin/access-tokens', { name, permissions: ['*'], websiteIds: [] });
    const { account: member } = await createAccountWithToken(server.db.kysely, `member-${random()}@example.test`, 'Marta Member');
    await server.db.kysely.updateTable('accounts').set({ password_hash: await hashPassword('member password 456') }).where('id', '=', member.id).execute();
    await server.db.kysely.insertInto('website_members').values({ website_id: websiteId, account_id: member.id, role: 'member', created_at: new Date().toISOString() }).execute();
    for (const invited of ['first.invited.person@example.test', 'second.invited.person@example.test']) {
      await ok('POST', `/api/v1/admin/websites/${websiteId}/team`, { email: invited, role: 'viewer' });
    }
  });

  it('keeps every row button of sessions, tokens, keys, goals and team on a phone screen', { timeout: 90_000 }, async () => {
    const page = await ownerPage();
    await page.goto(`${server.base}/account`);
    await page.getByRole('region', { name: 'API tokens' }).getByRole('cell', { name: 'Claude agent', exact: true }).waitFor();
    await page.getByRole('region', { name: 'Sessions' }).getByRole('cell', { name: /^Firefox on Windows/ }).waitFor();
    await screenshot(page, 'account');
    await expectRowButtonsOnScreen(page, 'account', 6);
    expect(await axeViolations(page), 'axe-core, account').toEqual([]);

    for (const [tab, text, atLeast] of [
      ['keys', 'Nightly export', 6],
      ['goals', 'checkout_completed', 3],
      ['team', 'second.invited.person@example.test', 3],
    ] as const) {
      await page.goto(`${server.base}/websites/${websiteId}/settings?tab=${tab}`);
      await page.locator('.table-wrap').getByText(text).first().waitFor();
      await screenshot(page, `settings-${tab}`);
      await expectRowButtonsOnScreen(page, tab, atLeast);
      expect(await axeViolations(page), `axe-core, ${tab}`).toEqual([]);
    }

    // The invitation's long message (no mail on this server, so the API route to accept it) wraps.
    await page.getByLabel('Email').fill('a.rather.long.address.for.a.phone@example.test');
    await page.getByRole('button', { name: 'Invite', exact: true }).click();
    const notice = page.getByRole('status').filter({ hasText: 'Invitation created' });
    await notice.waitFor();
    await screenshot(page, 'team-invited');
    const box = (await notice.boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width);
    await expectRowButtonsOnScreen(page, 'team after the invitation', 4);
    expect(server.pageErrors).toEqual([]);
  });

  it('shows flags as served SVGs, one row per unknown region with its country, and "Netherlands" whole in the details', { timeout: 60_000 }, async () => {
    const page = await ownerPage();
    await page.goto(`${server.base}/websites/${websiteId}?period=12mo`);
    const locations = page.getByRole('region', { name: 'Locations' });
    await locations.getByRole('button', { name: 'Netherlands' }).waitFor();
    // The Netherlands' flag: an <img> of /flags/nl.svg, loaded, and no emoji flag anywhere.
    const flag = locations.locator('img.an-flag').first();
    // The flags load lazily: a person scrolls down to the card first.
    await locations.scrollIntoViewIfNeeded();
    await expect.poll(() => flag.evaluate((image: HTMLImageElement) => image.complete && image.naturalWidth > 0)).toBe(true);
    expect(await locations.locator('img.an-flag').evaluateAll((images) => images.map((image) => new URL((image as HTMLImageElement).src).pathname))).toContain('/flags/nl.svg');
    expect(await page.evaluate(() => /[\u{1F1E6}-\u{1F1FF}]/u.test(document.body.innerText))).toBe(false);

    // Regions: the API answers one row of unknown region per country; each is named by its country.
    const regions = await call('GET', `/api/v1/analytics/regions?websiteId=${websiteId}`, undefined, owner);
    expect(regions.status, regions.text).toBe(200);
    const unknownRegions = (regions.json.data as Array<{ region: string | null; countryCode: string | null }>).filter((row) => row.region === null);
    expect(unknownRegions.map((row) => row.countryCode).sort()).toEqual(['DE', 'FR', 'GB', 'JP', 'NL', 'US']);
    await locations.getByRole('tab', { name: 'Regions' }).click();
    await locations.getByText('North Holland').waitFor();
    const names = await locations.locator('tbody th').allTextContents();
    expect(names).not.toContain('(unknown)');
    expect(new Set(names).size).toBe(names.length);
    expect(names).toContain('Germany (region unknown)');
    expect(await locations.locator('img.an-flag').count()).toBe(names.length);
    await screenshot(page, 'regions');

    // The countries' details on the phone: "Netherlands" on one line.
    await locations.getByRole('tab', { name: 'Countries' }).click();
    // (While the countries load, the regions' rows may show a moment under the countries' names.)
    await expect.poll(() => locations.locator('tbody th').allTextContents()).toEqual(['Netherlands', 'Germany', 'France', 'United Kingdom', 'Japan', 'United States']);
    await locations.getByRole('button', { name: /^Details/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Countries' });
    const netherlands = dialog.getByRole('button', { name: 'Netherlands' });
    await netherlands.waitFor();
    await dialog.getByRole('columnheader', { name: 'Revenue' }).waitFor();
    const lines = await netherlands.evaluate((element) => {
      const range = document.createRange();
      range.selectNodeContents(element);
      return new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size;
    });
    expect(lines).toBe(1);
    await expect.poll(() => dialog.locator('img.an-flag').first().evaluate((image: HTMLImageElement) => image.naturalWidth)).toBeGreaterThan(0);
    await screenshot(page, 'countries-details');
    expect(await axeViolations(page), 'axe-core, details').toEqual([]);
    expect(server.pageErrors).toEqual([]);
  });

  it('names months on the 12-month axis, reaches back to the first note for all time, and charts a one-day website by hour', { timeout: 60_000 }, async () => {
    const page = await ownerPage();
    await page.goto(`${server.base}/websites/${websiteId}?period=12mo`);
    const canvas = page.locator('.an-chart-canvas[data-ticks]');
    await canvas.waitFor();
    const ticks = ((await canvas.getAttribute('data-ticks')) ?? '').split('|');
    expect(ticks.length).toBeGreaterThanOrEqual(2);
    // "Jan 2026", then "Feb", ...: the year on the first label and where it changes, never "Jan 26".
    for (const tick of ticks) expect(tick).not.toMatch(/^[A-Z][a-z]+ \d{2}$/);
    expect(ticks[0]).toMatch(/^[A-Z][a-z]+ \d{4}$/);
    for (const tick of ticks.slice(1)) expect(tick).toMatch(/^(Jan \d{4}|[A-Z][a-z]+)$/);
    await screenshot(page, 'analytics-12mo');

    // All time: from the first note, a month before the first page view; every note listed.
    await page.goto(`${server.base}/websites/${websiteId}?period=all`);
    const notes = page.locator('.an-notes li');
    await expect.poll(() => notes.count()).toBe(3);
    expect(await page.locator('.an-notes').textContent()).toContain('Beta launched');
    await screenshot(page, 'analytics-all-time');
    expect(await axeViolations(page), 'axe-core, all time').toEqual([]);

    // A website with one day of data: all time is that day, by hour.
    await page.goto(`${server.base}/websites/${youngWebsiteId}?period=all`);
    const chart = page.getByRole('img', { name: /, all time, by hour/ });
    await chart.waitFor();
    expect((await page.locator('.an-chart-canvas').getAttribute('data-ticks'))?.split('|').length).toBeGreaterThan(1);
    await expect.poll(() => page.locator('.an-notes li').count()).toBe(1);
    await screenshot(page, 'analytics-young-all-time');
    expect(server.pageErrors).toEqual([]);
  });

  it('shows the app\'s own page with a 404 for an unknown path, JSON for an unknown API path', async () => {
    const page = await ownerPage();
    for (const path of ['/no-such-page', `/websites/${websiteId}/no-such-section`]) {
      const response = await page.goto(`${server.base}${path}`);
      expect(response?.status(), path).toBe(404);
      expect(response?.headers()['content-type'], path).toMatch(/^text\/html/);
      await page.getByRole('heading', { level: 1, name: 'Not found' }).waitFor();
      await page.getByRole('link', { name: 'Go to your websites' }).waitFor();
    }
    await screenshot(page, 'not-found');
    expect(await axeViolations(page), 'axe-core, not found').toEqual([]);
    const api = await call('GET', '/api/v1/no-such-route', undefined, undefined, { accept: 'text/html' });
    expect(api.status).toBe(404);
    expect(api.type).toMatch(/^application\/json/);
    expect(api.json.error.message).toBe('No route GET /api/v1/no-such-route');
    expect(server.pageErrors).toEqual([]);
  });

  it('says what is wrong with a form\'s field in a sentence, without the API\'s body. prefix', async () => {
    const page = await ownerPage();
    await page.goto(`${server.base}/account`);
    await page.getByLabel('Current password').fill('not my password at all');
    await page.getByLabel('New password', { exact: true }).fill('a new password 789');
    await page.getByLabel('New password, again').fill('a new password 789');
    await page.getByRole('button', { name: 'Change password' }).click();
    const error = page.locator('.field.has-error .field-error');
    await error.waitFor();
    expect(await error.textContent()).toBe('This is not the current password.');
    expect(await page.evaluate(() => document.body.innerText)).not.toContain('body.');
    await screenshot(page, 'password-error');
    expect(server.pageErrors).toEqual([]);
  });
});
