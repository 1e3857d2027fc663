import { randomBytes, randomUUID } from 'node:crypto';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { CHROME, IPHONE, goal, pageview } from './helpers/browser-events.ts';
import { PHONE, axeViolations, haveChromium, sayWhenChromiumIsMissing, screenshot, useDashboardServer } from './helpers/dashboard-browser.ts';

// The live view of the analytics page, in a real browser: Debian's Chromium (never a downloaded
// browser) drives the built dashboard (dist/web, built by the suite's global setup) served by
// Sightline on a real port, on a fresh SQLite database. Two visitors arrive (one from Google, on an
// iPhone, from a German address; one direct from a British address on a desktop), one of them
// reaches a customized goal and pays; the owner opens the live view from the current-visitors
// count and sees both with page, source, country flag and device, and the goal under its display
// name and the payment with its amount; a third visitor shows up within one 10-second poll. The
// dialog passes axe-core and fits a 390 px phone; polling stops once closed or with the tab hidden.

const random = () => randomBytes(4).toString('hex');
const MAP_PATH = '/api/v1/analytics/realtime/map';
// Addresses the bundled DB-IP database places in Germany (Frankfurt) and Great Britain (London).
const GERMAN_IP = '217.0.0.1';
const BRITISH_IP = '81.2.69.142';
const FRENCH_IP = '90.1.1.1';

sayWhenChromiumIsMissing('the live view in Chromium');

describe.skipIf(!haveChromium)('the live view in Chromium', () => {
  const server = useDashboardServer('realtime-e2e');
  const call = server.call;

  const track = (body: unknown, ip: string, userAgent: string) => server.track(body, { ip, userAgent });

  async function signedInPage(cookie: string, viewport = { width: 1280, height: 800 }, phone = false): Promise<Page> {
    const page = await server.page(cookie, { viewport, isMobile: phone, hasTouch: phone, deviceScaleFactor: phone ? 2 : 1 });
    page.setDefaultTimeout(12_000);
    return page;
  }

  /** Opens the analytics page and, from the current-visitors count, the live view. */
  async function openLive(page: Page, websiteId: string, count: number): Promise<Locator> {
    await page.goto(`${server.base}/websites/${websiteId}`);
    const opener = page.getByRole('button', { name: new RegExp(`^${count} current visitors? Live view$`) });
    await opener.waitFor();
    expect(await opener.getAttribute('aria-haspopup')).toBe('dialog');
    await page.waitForLoadState('networkidle');
    await screenshot(page, `live-header-${page.viewportSize()!.width}`);
    await opener.click();
    const dialog = page.getByRole('dialog', { name: 'Live visitors' });
    await dialog.waitFor();
    await dialog.getByRole('list').first().waitFor();
    return dialog;
  }

  /** A visitor's entry in the live list, found by the page they are on. */
  const visitorItem = (dialog: Locator, page: string) =>
    dialog.locator('li.an-live-visitor').filter({ has: dialog.page().locator('.an-live-page', { hasText: new RegExp(`^Page: ${page}( · .*)?$`) }) });

  /** The value beside a label ("Source") in a visitor's entry. */
  const fact = async (item: Locator, label: string) =>
    (await item.locator('dl > div').filter({ has: item.page().locator('dt', { hasText: label }) }).locator('dd').textContent())?.trim();

  it('lists the live visitors with page, source, country and device, their goal and payment, and a new visitor within a poll', { timeout: 90_000 }, async () => {
    const { owner, website } = await server.ownerWithWebsite();
    const { domain } = website;
    const websiteId = website.id;
    const keyAnswer = await call('POST', `/api/v1/admin/websites/${websiteId}/apikeys`, { name: 'server' }, owner);
    expect(keyAnswer.status, keyAnswer.text).toBe(200);
    const key = { key: keyAnswer.json.data[0].key as string };
    const at = (path: string) => `https://${domain}${path}`;

    // Anna, from Google on an iPhone in Germany, reads /pricing and signs up (a single-page app:
    // document.referrer, which the SDK sends with every event, stays Google's); Ben comes
    // directly, on a desktop in Britain, and reads the blog.
    const anna = { visitorId: randomUUID(), sessionId: `s${randomUUID()}` };
    const ben = { visitorId: randomUUID(), sessionId: `s${randomUUID()}` };
    await track(pageview(website, { ...anna, href: at('/'), referrer: 'https://www.google.com/' }), GERMAN_IP, IPHONE);
    await track(pageview(website, { ...anna, href: at('/pricing'), referrer: 'https://www.google.com/', viewport: { width: 390, height: 844 } }), GERMAN_IP, IPHONE);
    await track(goal(website, 'signup', {}, { ...anna, href: at('/pricing'), referrer: 'https://www.google.com/' }), GERMAN_IP, IPHONE);
    await track(pageview(website, { ...ben, href: at('/blog/launch'), referrer: null }), BRITISH_IP, CHROME);
    const customized = await call('PATCH', `/api/v1/admin/websites/${websiteId}/goals/customizations`, { goalName: 'signup', displayName: 'Sign-up', color: '#ef4444' }, owner);
    expect(customized.status, customized.text).toBe(200);
    const paid = await call('POST', '/api/v1/payments', { datafast_visitor_id: anna.visitorId, amount: 49, currency: 'EUR', transaction_id: `tx-${random()}`, customer_name: 'Anna' }, key);
    expect(paid.status, paid.text).toBe(200);

    // What the API says of them, so the page is checked against the same data.
    const map = await call('GET', `${MAP_PATH}?websiteId=${websiteId}`, undefined, owner);
    expect(map.status, map.text).toBe(200);
    expect(map.json.data.count).toBe(2);
    const annaShown = map.json.data.visitors.find((visitor: any) => visitor.visitorId === anna.visitorId);
    expect(annaShown).toMatchObject({ referrer: 'Google', location: { countryCode: 'DE' }, system: { device: { type: 'mobile' } } });

    const page = await signedInPage(owner.cookie);
    const mapReads: number[] = [];
    page.on('request', (request) => {
      if (request.url().includes(MAP_PATH)) mapReads.push(Date.now());
    });
    const dialog = await openLive(page, websiteId, 2);
    await dialog.getByRole('status').filter({ hasText: '2 visitors in the last 10 minutes' }).waitFor();

    // Both visitors, each with page, source, country (a served flag, never an emoji) and device.
    const annaItem = visitorItem(dialog, '/pricing');
    await annaItem.waitFor();
    expect(await fact(annaItem, 'Source')).toBe('Google');
    expect(await fact(annaItem, 'Country')).toBe('Frankfurt am Main, Germany');
    expect(await annaItem.locator('img.an-flag').getAttribute('src')).toBe('/flags/de.svg');
    expect(await annaItem.locator('img.an-flag').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
    expect(await fact(annaItem, 'Device')).toMatch(/^Mobile · (Mobile )?Safari · iOS$/);
    expect(await fact(annaItem, 'Last seen')).toMatch(/^(now|\d+ seconds? ago)$/);
    expect(await annaItem.textContent()).toContain('Anna'); // a paying customer shows by name

    const benItem = visitorItem(dialog, '/blog/launch');
    expect(await fact(benItem, 'Source')).toBe('Direct/None'); // as the API and the sources report name it
    expect(await fact(benItem, 'Country')).toBe('London, United Kingdom');
    expect(await benItem.locator('img.an-flag').getAttribute('src')).toBe('/flags/gb.svg');
    expect(await fact(benItem, 'Device')).toMatch(/^Desktop · Chrome · Windows$/);

    // Recent activity: the page views, the goal under its display name with its colour, the payment with its amount.
    const activity = dialog.getByRole('region', { name: 'Recent activity' });
    await activity.getByText('Viewed /blog/launch').waitFor();
    const goalRow = activity.getByRole('listitem').filter({ hasText: 'Goal Sign-up' });
    expect(await goalRow.count()).toBe(1);
    expect(await goalRow.locator('.an-swatch').evaluate((swatch) => getComputedStyle(swatch).backgroundColor)).toBe('rgb(239, 68, 68)');
    expect(await goalRow.locator('strong').getAttribute('title')).toBe('Sign-up (goal signup)');
    expect(await activity.getByRole('listitem').filter({ hasText: /^Payment €49\.00 from Anna/ }).count()).toBe(1);

    expect(await axeViolations(page), 'axe-core at 1280 px').toEqual([]);
    await screenshot(page, 'live-desktop');

    // A third visitor, from France: in the list within one poll (10 s), without a reload.
    const started = Date.now();
    await track(pageview(website, { visitorId: randomUUID(), sessionId: `s${randomUUID()}`, href: at('/docs'), referrer: 'https://news.ycombinator.com/item?id=1' }), FRENCH_IP, CHROME);
    const claireItem = visitorItem(dialog, '/docs');
    await claireItem.waitFor({ timeout: 12_000 });
    const appearedAfter = Date.now() - started;
    expect(appearedAfter).toBeLessThanOrEqual(12_000);
    expect(await fact(claireItem, 'Source')).toBe('Hacker News');
    await dialog.getByRole('status').filter({ hasText: '3 visitors in the last 10 minutes' }).waitFor();

    // On a phone: the dialog within the screen, nothing scrolls sideways, axe-core clean.
    const phone = await signedInPage(owner.cookie, PHONE, true);
    const phoneDialog = await openLive(phone, websiteId, 3);
    await visitorItem(phoneDialog, '/docs').waitFor();
    const box = await phoneDialog.boundingBox();
    expect(box!.x).toBeGreaterThanOrEqual(0);
    expect(box!.x + box!.width).toBeLessThanOrEqual(PHONE.width);
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    expect(await phoneDialog.evaluate((element) => element.scrollWidth <= element.clientWidth)).toBe(true);
    const close = await phoneDialog.getByRole('button', { name: 'Close' }).boundingBox();
    expect(close!.x + close!.width).toBeLessThanOrEqual(PHONE.width);
    expect(await axeViolations(phone), 'axe-core at 390 px').toEqual([]);
    await screenshot(phone, 'live-phone');

    // Polling stops when the dialog closes (desktop) and while the tab is hidden (phone): no read
    // of the map in the next 11 seconds on either page.
    await dialog.getByRole('button', { name: 'Close' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await page.evaluate(() => document.activeElement?.textContent)).toMatch(/current visitors/); // focus back on the opener
    const phoneReads: number[] = [];
    phone.on('request', (request) => {
      if (request.url().includes(MAP_PATH)) phoneReads.push(Date.now());
    });
    await phone.evaluate(() => {
      Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' });
      document.dispatchEvent(new Event('visibilitychange'));
    });
    const readsBefore = mapReads.length;
    await new Promise((resolve) => setTimeout(resolve, 11_000));
    expect(mapReads.length, 'map reads after the dialog closed').toBe(readsBefore);
    expect(phoneReads, 'map reads with the tab hidden').toEqual([]);
    // Visible again: read at once.
    await phone.evaluate(() => {
      Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'visible' });
      document.dispatchEvent(new Event('visibilitychange'));
    });
    await expect.poll(() => phoneReads.length, { timeout: 3_000 }).toBeGreaterThan(0);

    expect(server.pageErrors).toEqual([]);
    console.info(`live view: the third visitor appeared after ${appearedAfter} ms`);
  });
});
