import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { DESKTOP, PHONE, axeViolations, haveChromium, sayWhenChromiumIsMissing, screenshot, useDashboardServer } from './helpers/dashboard-browser.ts';

// The Integrations panel of a website's settings, in a real browser: Debian's Chromium (never a
// downloaded browser) drives the built dashboard (dist/web, built by the suite's global setup)
// served by Sightline listening on a real port, on a fresh SQLite database. One scenario: the
// owner connects Shopify by saving its webhook's signing secret, Shopify (this test, signing as
// Shopify does) delivers an orders/paid webhook to the URL the panel showed, and the panel counts
// it; Stripe is connected with a made-up key and shows its account check; a viewer sees the status
// and no form; the panel passes axe-core and its buttons fit a 390 px wide phone.


/** A provider's card, found by its heading ("Shopify (provider-five)"). */
function card(page: Page, title: string): Locator {
  return page.locator('li.provider').filter({ has: page.getByRole('heading', { level: 3, name: title, exact: true }) });
}

sayWhenChromiumIsMissing('the Integrations panel in Chromium');

describe.skipIf(!haveChromium)('the Integrations panel in Chromium', () => {
  const server = useDashboardServer('integrations-e2e');
  const call = server.call;

  /** A browser page signed in with the session cookie given, at `viewport`, that may use the clipboard. */
  const signedInPage = (cookie: string, viewport = DESKTOP, phone = false) =>
    server.page(cookie, { viewport, isMobile: phone, hasTouch: phone, permissions: ['clipboard-read', 'clipboard-write'] });

  async function openIntegrations(page: Page, websiteId: string): Promise<void> {
    await page.goto(`${server.base}/websites/${websiteId}/settings?tab=integrations`);
    await page.getByRole('heading', { level: 2, name: 'Integrations' }).waitFor();
    await card(page, 'Shopify (provider-five)').waitFor();
  }

  it('connects Shopify by its signing secret, counts a signed delivery, shows Stripe\'s account check, and fits a phone', { timeout: 60_000 }, async () => {
    // The owner (the first-run setup signs in) and a website, through the API: the setup and the
    // websites page have their own browser test (dashboard.e2e.test.ts).
    const { owner, website } = await server.ownerWithWebsite();
    const websiteId = website.id;

    const page = await signedInPage(owner.cookie);
    await openIntegrations(page, websiteId);

    // Every provider is named as people know it, with the API's name beside it.
    for (const title of ['Stripe (provider-one)', 'Lemon Squeezy (provider-two)', 'Polar (provider-three)', 'Paddle (provider-four)', 'Shopify (provider-five)', 'WooCommerce (provider-six)']) {
      await expect.poll(() => card(page, title).count(), { message: title }).toBe(1);
    }

    // Shopify: its webhook URL, to copy into the store's settings, before anything is connected.
    const shopify = card(page, 'Shopify (provider-five)');
    expect(await shopify.locator('.status').first().textContent()).toBe('not connected');
    const url = await shopify.getByLabel('Webhook URL').inputValue();
    expect(url).toBe(`${server.base}/api/webhooks/shopify/${websiteId}`);
    await shopify.getByRole('button', { name: /^Copy/ }).click();
    await shopify.getByRole('button', { name: /^Copied/ }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(url);
    await shopify.getByText('No secret yet.').waitFor();
    await shopify.getByText('No event received yet.').waitFor();

    // A secret the server refuses (white space only, so nothing once trimmed): its message at the field.
    const secretField = shopify.getByLabel('Signing secret');
    await secretField.fill('   ');
    await shopify.getByRole('button', { name: /^Connect/ }).click();
    const fieldError = shopify.locator('.field.has-error .field-error');
    await fieldError.waitFor();
    expect(await secretField.getAttribute('aria-invalid')).toBe('true');
    expect(await secretField.getAttribute('aria-describedby')).toContain(await fieldError.getAttribute('id'));

    // Saving the signing secret connects Shopify; the secret does not stay in the page.
    const secret = `shpss_${randomBytes(16).toString('hex')}`;
    await secretField.fill(secret);
    await shopify.getByRole('button', { name: /^Connect/ }).click();
    await shopify.getByText('Shopify is connected.').waitFor();
    await expect.poll(() => shopify.locator('.status').first().textContent()).toBe('connected');
    await shopify.getByText(/^Secret set /).waitFor();
    expect(await secretField.inputValue()).toBe('');
    await shopify.getByRole('button', { name: /^Replace secret/ }).waitFor();
    await shopify.getByRole('button', { name: /^Disconnect/ }).waitFor();
    expect(await page.content()).not.toContain(secret);

    // Shopify delivers orders/paid to that URL, signed as Shopify signs: base64 HMAC-SHA256 of the raw body.
    const order = {
      id: 5678901234567,
      email: 'jon@example.com',
      created_at: '2026-05-01T12:00:00-04:00',
      processed_at: '2026-05-01T12:00:05-04:00',
      currency: 'CAD',
      total_price: '403.00',
      financial_status: 'paid',
      note_attributes: [{ name: 'datafast_visitor_id', value: 'visitor-shop-1' }],
      customer: { id: 115310627314723950, email: 'jon@example.com', first_name: 'Jon', last_name: 'Snow' },
    };
    const raw = JSON.stringify(order);
    const delivery = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-shopify-topic': 'orders/paid',
        'x-shopify-webhook-id': randomUUID(),
        'x-shopify-event-id': randomUUID(),
        'x-shopify-shop-domain': 'example.myshopify.com',
        'x-shopify-hmac-sha256': createHmac('sha256', secret).update(raw, 'utf8').digest('base64'),
      },
      body: raw,
    });
    const deliveryText = await delivery.text();
    expect(delivery.status, deliveryText).toBe(200);
    expect(JSON.parse(deliveryText)).toMatchObject({ received: true, duplicate: false, payments: 1 });

    await page.reload();
    await card(page, 'Shopify (provider-five)').waitFor();
    const lastEvent = shopify.getByText(/^Last event: /);
    await lastEvent.waitFor();
    expect(await lastEvent.textContent()).toMatch(/^Last event: orders\/paid at .+ \(1 received\)\.$/);

    // Stripe, with a made-up restricted key: connected, and its account check as the server has it
    // (the job worker is off in tests, so the check never starts: "verifying").
    const stripe = card(page, 'Stripe (provider-one)');
    expect(await stripe.getByLabel('Webhook URL').count()).toBe(0); // set once connected
    await stripe.getByRole('button', { name: /^Connect/ }).click();
    await stripe.getByLabel('Restricted key (rk_...)').fill(`rk_test_${randomBytes(12).toString('hex')}`);
    await stripe.getByRole('button', { name: /^Connect/ }).click();
    await stripe.getByText('Stripe is connected: the key is being checked.').waitFor();
    await expect.poll(() => stripe.locator('.status').first().textContent()).toBe('connected');
    const status = await call('GET', `/api/v1/admin/websites/${websiteId}/integrations`, undefined, owner);
    const account = status.json.data[0]['provider-one'].account;
    expect(account.status).toBe('verifying');
    await stripe.getByText(/^Account: verifying…/).waitFor();
    // The re-sync route answers; with the connect's job still open, it says so.
    await stripe.getByRole('button', { name: /^Re-sync history/ }).click();
    await stripe.getByRole('status').filter({ hasText: 'A re-sync is already queued' }).waitFor();
    expect(await stripe.getByLabel('Webhook URL').inputValue()).toBe(`${server.base}/api/webhooks/stripe/${websiteId}`);
    await stripe.getByText('checkout.session.completed', { exact: true }).waitFor();
    expect(await axeViolations(page), 'axe-core at 1280 px').toEqual([]);
    await screenshot(page, 'integrations-desktop');

    // On a phone: no sideways scrolling, and Shopify's buttons within the screen's width.
    const phone = await signedInPage(owner.cookie, PHONE, true);
    await openIntegrations(phone, websiteId);
    const phoneShopify = card(phone, 'Shopify (provider-five)');
    for (const name of [/^Copy/, /^Replace secret/, /^Disconnect/]) {
      const box = await phoneShopify.getByRole('button', { name }).boundingBox();
      expect(box, String(name)).not.toBeNull();
      expect(box!.x, String(name)).toBeGreaterThanOrEqual(0);
      expect(box!.x + box!.width, String(name)).toBeLessThanOrEqual(PHONE.width);
    }
    const urlBox = await phoneShopify.getByLabel('Webhook URL').boundingBox();
    expect(urlBox!.x + urlBox!.width).toBeLessThanOrEqual(PHONE.width);
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    expect(await axeViolations(phone), 'axe-core at 390 px').toEqual([]);
    await screenshot(phone, 'integrations-phone');

    // A viewer reads the status, with no form and no button in the providers' cards.
    const viewerPage = await signedInPage(await server.memberSession(websiteId, 'viewer'));
    await openIntegrations(viewerPage, websiteId);
    const viewerShopify = card(viewerPage, 'Shopify (provider-five)');
    await viewerShopify.getByText(/^Last event: orders\/paid/).waitFor();
    expect(await viewerPage.locator('.provider-grid form, .provider-grid button').count()).toBe(0);

    // Disconnecting Shopify, confirmed.
    await shopify.getByRole('button', { name: /^Disconnect/ }).click();
    await page.getByRole('dialog', { name: 'Disconnect Shopify?' }).getByRole('button', { name: 'Disconnect' }).click();
    await shopify.getByText('Shopify is disconnected.').waitFor();
    await expect.poll(() => shopify.locator('.status').first().textContent()).toBe('not connected');
    await shopify.getByRole('button', { name: /^Connect/ }).waitFor();

    expect(server.pageErrors).toEqual([]);
  });
});
