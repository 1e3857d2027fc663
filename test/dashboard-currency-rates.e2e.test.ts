import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { pageview } from './helpers/browser-events.ts';
import { deliveriesOf } from './helpers/provider-webhooks.ts';
import { DESKTOP, PHONE, SCREENSHOTS, axeViolations, haveChromium, sayWhenChromiumIsMissing, screenshot, useDashboardServer } from './helpers/dashboard-browser.ts';

// The exchange rates of a website in the dashboard (issue 35 item 3), in a real browser: Debian's
// Chromium (never a downloaded browser) drives the built dashboard (dist/web, built by the suite's
// global setup) served by Sightline on a real port, on a fresh SQLite database. A USD website has a
// visitor paying in USD, GBP and EUR (POST /api/v1/payments with a df_ key), and in CHF through a
// signed Shopify order the shop converted into USD (counted as such, named nowhere): the analytics page says
// GBP and EUR count nowhere and links to the settings' Currencies card, which lists them; "Set
// rate" for GBP fills the form, a rate of 0 is refused at its field, 1.27 is saved and listed, and
// the overview's revenue then counts the GBP payments at it while the notice names EUR alone.
// Removing the rate is confirmed; a viewer reads the rates with no form. axe-core is clean at 1280
// and 390 px, every button of the card fits a phone, and the analytics page keeps its JS budget.

const JS_BUDGET_BYTES = 150 * 1024;

// What the visitor pays: USD counts as it is; GBP (3 payments, £120) and EUR (€20) have no rate yet.
const USD_PAID = 50;
// A Shopify order paid in CHF that the shop converted to 27.50 USD (its shop money): it counts that
// amount, and is named nowhere as unconverted.
const SHOP_CONVERTED = 27.5;
const USD_COUNTED = USD_PAID + SHOP_CONVERTED;
const GBP_PAYMENTS = [30, 40, 50];
const EUR_PAID = 20;
const GBP_RATE = 1.27;
const money = (value: number, currency: string) => new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(value);

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

sayWhenChromiumIsMissing('exchange rates in the dashboard in Chromium');

describe.skipIf(!haveChromium)('exchange rates in the dashboard in Chromium', () => {
  const server = useDashboardServer('currency-rates-e2e');
  const call = server.call;

  /** A browser page signed in with the session cookie given, at `viewport`, reading and writing numbers as en-US. */
  const signedInPage = (cookie: string, viewport = DESKTOP, phone = false) =>
    server.page(cookie, { viewport, isMobile: phone, hasTouch: phone, deviceScaleFactor: phone ? 2 : 1, locale: 'en-US' });

  const ratesCard = (page: Page): Locator => page.locator('section.card#currencies');
  const ratesNote = (page: Page): Locator => page.locator('.an-rates-note');
  const revenueTile = (page: Page): Locator =>
    page.getByRole('region', { name: 'Overview' }).locator('.an-tile').filter({ has: page.locator('.an-tile-label', { hasText: /^Revenue$/ }) });

  /** The analytics page, once the overview has loaded. */
  async function openAnalytics(page: Page, websiteId: string) {
    await page.goto(`${server.base}/websites/${websiteId}`);
    await revenueTile(page).locator('.an-tile-value').waitFor();
    await page.waitForLoadState('networkidle');
  }

  /** The General settings, once the Currencies card has loaded its rates. */
  async function openCurrencies(page: Page, websiteId: string) {
    await page.goto(`${server.base}/websites/${websiteId}/settings#currencies`);
    await ratesCard(page).getByRole('heading', { level: 2, name: 'Currencies' }).waitFor();
    await ratesCard(page).locator('.loading, [aria-busy="true"]').waitFor({ state: 'detached' }).catch(() => {});
    await page.waitForLoadState('networkidle');
  }

  it('names the currencies counted nowhere, sets a rate from the warning, counts it in the revenue, removes it, and fits a phone', { timeout: 120_000 }, async () => {
    // The owner (the first-run setup signs in), a USD website and a df_ key, through the API.
    const { owner, website } = await server.ownerWithWebsite();
    const { domain } = website;
    // USD, the default: set it all the same, so the test does not lean on the default.
    if (website.currency !== 'USD') expect((await call('PUT', `/api/v1/admin/websites/${website.id}`, { currency: 'USD' }, owner)).status).toBe(200);
    const websiteId = website.id;
    const keyAnswer = await call('POST', `/api/v1/admin/websites/${websiteId}/apikeys`, { name: 'server' }, owner);
    expect(keyAnswer.status, keyAnswer.text).toBe(200);
    const key = { key: keyAnswer.json.data[0].key as string };

    // One visitor's page view, then payments in USD, GBP (three) and EUR.
    const visitorId = randomUUID();
    await server.track(pageview(website, { visitorId, href: `https://${domain}/pricing`, referrer: null }));
    const pay = async (amount: number, currency: string) => {
      const paid = await call('POST', '/api/v1/payments', { datafast_visitor_id: visitorId, amount, currency, transaction_id: `tx-${currency}-${randomUUID()}` }, key);
      expect(paid.status, paid.text).toBe(200);
    };
    await pay(USD_PAID, 'USD');
    for (const amount of GBP_PAYMENTS) await pay(amount, 'GBP');
    await pay(EUR_PAID, 'EUR');
    const signingSecret = `whsec_${randomUUID()}`;
    expect((await call('PUT', `/api/v1/admin/websites/${websiteId}/integrations/provider-five/webhook`, { signingSecret }, owner)).status).toBe(200);
    const order = deliveriesOf('provider-five').checkout({ secret: signingSecret, eventId: randomUUID(), id: 4242, visitorId, amount: 25, currency: 'CHF', converted: { amount: SHOP_CONVERTED, currency: 'USD' } });
    const delivered = await fetch(`${server.base}/api/webhooks/shopify/${websiteId}`, { method: 'POST', headers: order.headers, body: order.payload });
    expect(delivered.status, await delivered.text()).toBe(200);
    const overview = async () => (await call('GET', `/api/v1/analytics/overview?websiteId=${websiteId}&fields=revenue`, undefined, owner)).json?.data?.[0]?.revenue;
    await expect.poll(overview, { timeout: 15_000 }).toBe(USD_COUNTED);

    // The analytics page, in a fresh context (every script really fetched): within its JS budget,
    // the USD payment alone in the revenue, and a line naming GBP and EUR under the overview.
    const page = await signedInPage(owner.cookie);
    const scripts = new Set<string>();
    page.on('response', (response) => {
      const type = response.headers()['content-type'] ?? '';
      if (response.request().resourceType() === 'script' || type.includes('javascript')) scripts.add(response.url());
    });
    await openAnalytics(page, websiteId);
    let jsBytes = 0;
    const sizes: string[] = [];
    for (const url of scripts) {
      const { bytes, encoding } = await gzipTransferSize(url);
      expect(encoding, url).toBe('gzip');
      jsBytes += bytes;
      sizes.push(`${url.replace(server.base, '')}: ${bytes}`);
    }
    console.log(`gzipped JavaScript of the analytics page: ${jsBytes} bytes\n  ${sizes.join('\n  ')}`);
    expect(jsBytes, sizes.join('\n')).toBeLessThanOrEqual(JS_BUDGET_BYTES);

    expect(await revenueTile(page).locator('.an-tile-value').textContent()).toBe(money(USD_COUNTED, 'USD'));
    await ratesNote(page).waitFor();
    expect(await ratesNote(page).textContent()).toBe('Payments in EUR and GBP are not counted in revenue: set a rate in Settings.');
    expect(await axeViolations(page), 'axe-core at 1280 px, analytics with the notice').toEqual([]);
    await screenshot(page, 'rates-analytics-before');
    if (SCREENSHOTS) await page.getByRole('region', { name: 'Overview' }).screenshot({ path: join(SCREENSHOTS, 'rates-overview-before.png') });

    // Its link opens the settings at the Currencies card, in view, which lists both as counted nowhere.
    await ratesNote(page).getByRole('link', { name: 'set a rate in Settings' }).click();
    await page.waitForURL(`${server.base}/websites/${websiteId}/settings#currencies`);
    const card = ratesCard(page);
    const warning = card.locator('.rates-warning');
    await warning.waitFor();
    await expect.poll(async () => (await card.getByRole('heading', { name: 'Currencies' }).boundingBox())?.y ?? -1).toBeGreaterThanOrEqual(0);
    expect((await card.getByRole('heading', { name: 'Currencies' }).boundingBox())!.y).toBeLessThan(DESKTOP.height);
    if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, 'rates-settings-from-link.png') });
    expect(await card.locator('p').first().textContent()).toContain('Revenue is counted in USD');
    expect(await warning.locator('li > span').allTextContents()).toEqual([
      `1 payment in EUR (${money(EUR_PAID, 'EUR')}) counts in no report: set a rate.`,
      `3 payments in GBP (${money(120, 'GBP')}) count in no report: set a rate.`,
    ]);
    await card.getByText('No exchange rate is set: only payments in USD, or converted into it by their provider, count.').waitFor();
    await screenshot(page, 'rates-settings-unconverted');

    // "Set rate" for GBP fills the code and puts the focus on the rate, whose hint reads "1 GBP = ? USD".
    await warning.getByRole('button', { name: 'Set rate for GBP' }).click();
    const codeField = card.getByLabel('Currency code');
    const rateField = card.getByLabel('Rate, in USD');
    expect(await codeField.inputValue()).toBe('GBP');
    await expect.poll(() => rateField.evaluate((element) => element === document.activeElement)).toBe(true);
    const rateHint = card.locator('.field', { has: page.getByLabel('Rate, in USD') }).locator('.hint');
    expect(await rateHint.textContent()).toBe('1 GBP = ? USD');
    // The datalist offers the currencies counted nowhere first.
    const offered = await page.locator(`datalist#${(await codeField.getAttribute('list'))!.replace(/:/g, '\\:')} option`).evaluateAll((options) =>
      options.map((option) => (option as HTMLOptionElement).value),
    );
    expect(offered.slice(0, 2)).toEqual(['EUR', 'GBP']);
    expect(offered).not.toContain('USD');

    // A rate of 0: the server's refusal at the rate field, tied to it.
    await rateField.fill('0');
    await card.getByRole('button', { name: 'Save rate' }).click();
    const rateError = card.locator('.field.has-error .field-error');
    await rateError.waitFor();
    expect(await rateError.textContent()).toBe('The rate must be more than 0.');
    expect(await rateField.getAttribute('aria-invalid')).toBe('true');
    expect(await rateField.getAttribute('aria-describedby')).toContain(await rateError.getAttribute('id'));
    expect(await codeField.getAttribute('aria-invalid')).toBeNull();
    await screenshot(page, 'rates-settings-error');

    // The website's own currency: the server's refusal (path.currency) at the code field.
    await codeField.fill('usd');
    expect(await codeField.inputValue()).toBe('USD');
    await rateField.fill('1');
    await card.getByRole('button', { name: 'Save rate' }).click();
    await expect.poll(() => codeField.getAttribute('aria-invalid')).toBe('true');
    const codeError = card.locator('.field', { has: page.getByLabel('Currency code') }).locator('.field-error');
    expect(await codeError.textContent()).toBe("This is the website's own currency (USD); it needs no rate.");
    expect(await codeField.getAttribute('aria-describedby')).toContain(await codeError.getAttribute('id'));
    expect(await rateField.getAttribute('aria-invalid')).toBeNull();
    await codeField.fill('GBP');

    // 1.27: saved, listed, and GBP leaves the warning.
    await rateField.fill(String(GBP_RATE));
    expect(await rateHint.textContent()).toBe('1 GBP = 1.27 USD');
    await card.getByRole('button', { name: 'Save rate' }).click();
    await card.getByText('GBP now counts at 1 GBP = 1.27 USD in every report, past payments included.').waitFor();
    const gbpRow = card.getByRole('row').filter({ hasText: 'GBP' });
    await gbpRow.waitFor();
    expect(await gbpRow.locator('td').nth(1).textContent()).toBe('1 GBP = 1.27 USD');
    await expect.poll(() => warning.locator('li > span').allTextContents()).toEqual([`1 payment in EUR (${money(EUR_PAID, 'EUR')}) counts in no report: set a rate.`]);
    expect(await codeField.inputValue()).toBe('');
    expect(await rateField.getAttribute('aria-invalid')).toBeNull();
    const listed = await call('GET', `/api/v1/admin/websites/${websiteId}/currency-rates`, undefined, owner);
    expect(listed.json.data).toEqual([{ currency: 'GBP', rate: GBP_RATE, updatedAt: expect.any(String) }]);
    expect(await axeViolations(page), 'axe-core at 1280 px, settings with a rate').toEqual([]);
    await screenshot(page, 'rates-settings-saved');
    if (SCREENSHOTS) await card.screenshot({ path: join(SCREENSHOTS, 'rates-card-saved.png') });

    // Edit fills the form with the rate as it is.
    await gbpRow.getByRole('button', { name: 'Edit the rate of GBP' }).click();
    expect(await codeField.inputValue()).toBe('GBP');
    expect(await rateField.inputValue()).toBe(String(GBP_RATE));
    await expect.poll(() => rateField.evaluate((element) => element === document.activeElement)).toBe(true);

    // The analytics page: the GBP payments in the revenue at 1.27, and the notice names EUR alone.
    const converted = USD_COUNTED + GBP_PAYMENTS.reduce((sum, amount) => sum + amount, 0) * GBP_RATE; // 77.50 + 120 × 1.27 = 229.90
    await openAnalytics(page, websiteId);
    await expect.poll(() => revenueTile(page).locator('.an-tile-value').textContent()).toBe(money(converted, 'USD'));
    expect(money(converted, 'USD')).toBe('$229.90');
    expect(await ratesNote(page).textContent()).toBe('Payments in EUR are not counted in revenue: set a rate in Settings.');
    await screenshot(page, 'rates-analytics-after');

    // On a phone: the analytics notice and the Currencies card fit, every button of the card within the screen.
    const phone = await signedInPage(owner.cookie, PHONE, true);
    await openAnalytics(phone, websiteId);
    await ratesNote(phone).waitFor();
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    expect(await axeViolations(phone), 'axe-core at 390 px, analytics').toEqual([]);
    await screenshot(phone, 'rates-analytics-phone');
    await openCurrencies(phone, websiteId);
    const phoneCard = ratesCard(phone);
    await phoneCard.getByRole('row').filter({ hasText: 'GBP' }).waitFor();
    const buttons = phoneCard.getByRole('button');
    expect(await buttons.count()).toBeGreaterThanOrEqual(4); // Set rate (EUR), Edit, Remove, Save rate
    for (const button of await buttons.all()) {
      const name = (await button.textContent()) ?? '';
      await button.scrollIntoViewIfNeeded();
      const box = await button.boundingBox();
      expect(box, name).not.toBeNull();
      expect(box!.x, name).toBeGreaterThanOrEqual(0);
      expect(box!.x + box!.width, name).toBeLessThanOrEqual(PHONE.width);
    }
    for (const field of [phoneCard.getByLabel('Currency code'), phoneCard.getByLabel('Rate, in USD')]) {
      const box = await field.boundingBox();
      expect(box!.x + box!.width).toBeLessThanOrEqual(PHONE.width);
    }
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    expect(await axeViolations(phone), 'axe-core at 390 px, settings').toEqual([]);
    await screenshot(phone, 'rates-settings-phone');
    if (SCREENSHOTS) await phoneCard.screenshot({ path: join(SCREENSHOTS, 'rates-card-phone.png') });

    // Remove, confirmed: the row goes, GBP is counted nowhere again.
    await openCurrencies(page, websiteId);
    await card.getByRole('row').filter({ hasText: 'GBP' }).getByRole('button', { name: 'Remove the rate of GBP' }).click();
    const dialog = page.getByRole('dialog', { name: 'Remove the rate of GBP?' });
    await dialog.waitFor();
    expect(await axeViolations(page), 'axe-core at 1280 px, confirm dialog').toEqual([]);
    await screenshot(page, 'rates-remove-dialog');
    await dialog.getByRole('button', { name: 'Remove rate' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await card.getByText('The rate of GBP is removed: its payments count in no report.').waitFor();
    await card.getByText('No exchange rate is set: only payments in USD, or converted into it by their provider, count.').waitFor();
    expect(await card.getByRole('row').count()).toBe(0);
    await expect.poll(() => warning.locator('li > span').count()).toBe(2);
    expect((await call('GET', `/api/v1/admin/websites/${websiteId}/currency-rates`, undefined, owner)).json.data).toEqual([]);
    await expect.poll(overview).toBe(USD_COUNTED);

    // A viewer reads the rates (EUR, set through the API) and the warning, with no form and no button in the card.
    expect((await call('PUT', `/api/v1/admin/websites/${websiteId}/currency-rates/EUR`, { rate: 1.08 }, owner)).status).toBe(200);
    const viewerPage = await signedInPage(await server.memberSession(websiteId, 'viewer'));
    await openCurrencies(viewerPage, websiteId);
    const viewerCard = ratesCard(viewerPage);
    await viewerCard.getByRole('row').filter({ hasText: 'EUR' }).waitFor();
    expect(await viewerCard.getByRole('row').filter({ hasText: 'EUR' }).locator('td').nth(1).textContent()).toBe('1 EUR = 1.08 USD');
    expect(await viewerCard.locator('.rates-warning li > span').allTextContents()).toEqual([`3 payments in GBP (${money(120, 'GBP')}) count in no report.`]);
    await viewerCard.getByText('An owner or a member of this website can set their rates.').waitFor();
    expect(await viewerCard.locator('form, input, button').count()).toBe(0);
    expect(await axeViolations(viewerPage), 'axe-core at 1280 px, viewer').toEqual([]);
    await screenshot(viewerPage, 'rates-settings-viewer');
    await openAnalytics(viewerPage, websiteId);
    expect(await ratesNote(viewerPage).textContent()).toBe('Payments in GBP are not counted in revenue: see Settings (an owner or a member sets the rates).');

    expect(server.pageErrors).toEqual([]);
  });
});
