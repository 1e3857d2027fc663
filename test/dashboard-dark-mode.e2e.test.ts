import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import type { NewEvent } from '../src/modules/events/event.types.ts';
import { axeViolations, haveChromium, sayWhenChromiumIsMissing, screenshot as saveScreenshot, useDashboardServer } from './helpers/dashboard-browser.ts';
import { sessionCookieOf } from './helpers/dashboard-session.ts';
import { newEvent } from './helpers/factories.ts';

// Dark mode (issue 35, item 8) in a real browser: Debian's Chromium (never a downloaded browser)
// drives the built dashboard (dist/web, built by the suite's global setup) served by Sightline on a
// real port, on a fresh SQLite database. The owner, a website with page views, customized goals (a
// KPI card), a payment, a note, a funnel, keys, a member and an invitation are made through the API
// and the event writer. Then, with the system set to dark and to light (the browser context's
// colorScheme; the dashboard has no switch of its own, it follows the system): on the sign-in page,
// the websites list, the analytics page (also filtered on a goal, and its details dialog), every
// settings section, the account page and the not-found page, body's background is dark in dark
// and light in light (the light one exactly as before) and axe-core, colour contrast included,
// reports no serious or critical violation. The chart, drawn on a canvas, takes its colours from
// the theme (a dark goal colour becomes its family's light shade in dark) and is redrawn when the
// system's scheme changes under an open page. SIGHTLINE_SCREENSHOTS=<dir> saves each state as a PNG.

const random = () => randomBytes(4).toString('hex');
const PASSWORD = 'owner password 123';
const DESKTOP = { width: 1280, height: 900 };
type Scheme = 'light' | 'dark';

/** The light theme's page grey (styles.css --bg), which dark mode must leave as it was. */
const LIGHT_BODY = 'rgb(243, 244, 246)';

/** The relative luminance (0 black, 1 white) of a computed `rgb(...)`/`rgba(...)` colour. */
function luminance(css: string): number {
  const [r, g, b] = (css.match(/[\d.]+/g) ?? []).slice(0, 3).map(Number) as [number, number, number];
  const channel = (value: number) => {
    const v = value / 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
}

sayWhenChromiumIsMissing('dark mode, in Chromium');

describe.skipIf(!haveChromium)('dark mode, in Chromium', () => {
  const server = useDashboardServer('dark-e2e');
  const call = server.call;
  let owner: { cookie: string; csrfToken: string };
  let websiteId: string;

  async function ok(method: string, path: string, body?: unknown) {
    const answer = await call(method, path, body, owner);
    expect(answer.status, `${method} ${path}: ${answer.text}`).toBe(200);
    return answer.json;
  }

  /** A desktop page with the system's colour scheme `scheme`, signed in as the owner unless `signedOut`. */
  async function schemePage(scheme: Scheme, signedOut = false): Promise<Page> {
    if (!signedOut) return server.page(owner.cookie, { viewport: DESKTOP, colorScheme: scheme });
    const page = await (await server.browser.newContext({ viewport: DESKTOP, colorScheme: scheme })).newPage();
    page.on('pageerror', (error) => server.pageErrors.push(`${page.url()}: ${error.message}`));
    return page;
  }

  let shot = 0;
  async function screenshot(page: Page, scheme: Scheme, name: string): Promise<void> {
    shot += 1;
    await saveScreenshot(page, `${scheme}-${String(shot).padStart(2, '0')}-${name}`);
  }

  /** Body's background is dark in dark and the light theme's grey in light; axe-core is clean. */
  async function checkState(page: Page, scheme: Scheme, name: string): Promise<void> {
    await page.waitForLoadState('networkidle');
    await screenshot(page, scheme, name);
    const body = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    if (scheme === 'dark') expect(luminance(body), `${name}: body's background ${body}`).toBeLessThan(0.05);
    else expect(body, `${name}: body's background`).toBe(LIGHT_BODY);
    expect(await page.evaluate(() => getComputedStyle(document.documentElement).colorScheme), `${name}: color-scheme`).toBe('light dark');
    expect(await axeViolations(page), `axe-core, ${scheme}, ${name}`).toEqual([]);
  }

  /** The colour uPlot gave the charted line (its legend marker's border), as rgb(...). */
  async function lineColor(page: Page): Promise<string> {
    const marker = page.locator('.an-chart .u-legend .u-series').nth(1).locator('.u-marker');
    return marker.evaluate((element) => getComputedStyle(element).borderLeftColor);
  }

  beforeAll(async () => {
    // The owner (the first-run setup signs in) and a website.
    const setup = await call('POST', '/api/v1/dashboard/setup', { email: `owner-${random()}@example.test`, name: 'Olivia Owner', password: PASSWORD });
    expect(setup.status, setup.text).toBe(200);
    owner = { cookie: sessionCookieOf(setup.setCookie), csrfToken: setup.json.data[0].csrfToken as string };
    websiteId = (await ok('POST', '/api/v1/admin/websites', { domain: `shop-${random()}.test`, timezone: 'Europe/Paris', name: 'Shop' })).data[0].id;

    // Ten days of page views from four countries and three sources, with goals: signup (the KPI,
    // customized in dark grey, a colour too dark for a line on the dark card) and newsletter.
    const now = Date.now();
    const events: NewEvent[] = [];
    const countries = ['NL', 'DE', 'US', 'FR'];
    const referrers = ['https://www.google.com/', 'https://news.ycombinator.com/', null];
    for (let day = 1; day <= 10; day++) {
      for (let index = 0; index < 2 + (day % 4); index++) {
        const visitor = `v-${day}-${index}`;
        const occurredAt = new Date(now - day * 86_400_000 + index * 60_000).toISOString();
        const common = { country: countries[index % countries.length]!, occurredAt, referrer: referrers[index % referrers.length]! };
        events.push(newEvent(websiteId, visitor, { ...common, path: index % 2 ? '/pricing' : '/' }));
        if (index % 2) events.push(newEvent(websiteId, visitor, { ...common, type: 'custom', name: 'signup', path: '/pricing' }));
        if (index === 0) events.push(newEvent(websiteId, visitor, { ...common, type: 'custom', name: 'newsletter' }));
      }
    }
    await (server.app as any).events.write(events);
    await (server.app as any).events.flush();
    await ok('PATCH', `/api/v1/admin/websites/${websiteId}/goals/customizations`, { goalName: 'signup', displayName: 'Sign-up', color: '#374151', description: 'A visitor created an account' });
    await ok('PATCH', `/api/v1/admin/websites/${websiteId}/goals/customizations`, { goalName: 'newsletter', displayName: 'Newsletter', color: '#ef4444' });
    await ok('PUT', `/api/v1/admin/websites/${websiteId}`, { kpi: 'signup', kpiColorScheme: 'teal' });
    await ok('POST', `/api/v1/admin/websites/${websiteId}/funnels`, { name: 'Pricing to sign-up', steps: [{ type: 'pageview', url: '/pricing' }, { type: 'goal', goalName: 'signup' }] });
    await ok('POST', `/api/v1/admin/websites/${websiteId}/notes`, { text: 'Pricing page redesigned', timestamp: new Date(now - 5 * 86_400_000).toISOString() });

    // A key, a payment of a visitor through it, a token, a member and an invitation.
    const key = (await ok('POST', `/api/v1/admin/websites/${websiteId}/apikeys`, { name: 'Backend server' })).data[0].key as string;
    const payment = await call('POST', `/api/v1/payments?websiteId=${websiteId}`, { amount: 249, currency: 'USD', transaction_id: 'txn-dark-1', datafast_visitor_id: 'v-2-1' }, undefined, { authorization: `Bearer ${key}` });
    expect(payment.status, payment.text).toBe(200);
    await ok('POST', '/api/v1/admin/access-tokens', { name: 'Deploy script', permissions: ['*'], websiteIds: [] });
    await server.memberSession(websiteId, 'member');
    await ok('POST', `/api/v1/admin/websites/${websiteId}/team`, { email: 'invited.person@example.test', role: 'viewer' });
  });

  for (const scheme of ['light', 'dark'] as const) {
    it(`follows the system's ${scheme} scheme on every page, axe-core clean`, { timeout: 120_000 }, async () => {
      // Signed out: the sign-in page.
      const signedOut = await schemePage(scheme, true);
      await signedOut.goto(`${server.base}/`);
      await signedOut.getByRole('heading', { level: 1 }).waitFor();
      await checkState(signedOut, scheme, 'sign-in');
      await signedOut.context().close();

      const page = await schemePage(scheme);
      await page.goto(`${server.base}/`);
      await page.getByRole('list', { name: 'Your websites' }).getByText('Shop').first().waitFor();
      await checkState(page, scheme, 'websites');

      // The analytics page: the KPI card, the goals with their display names, the chart.
      await page.goto(`${server.base}/websites/${websiteId}`);
      const kpi = page.getByRole('region', { name: 'Overview' }).locator('.an-kpi');
      await kpi.locator('.an-tile-value').waitFor();
      await page.getByRole('region', { name: 'Goals' }).getByRole('button', { name: 'Sign-up', exact: true }).waitFor();
      await page.locator('.an-chart-canvas[data-ticks]').waitFor();
      await page.locator('.an-notes li').first().waitFor();
      await checkState(page, scheme, 'analytics');
      // The KPI card's tint follows the theme, its text keeps more than 7:1 on it.
      const [tint, text] = await kpi.evaluate((element) => {
        const style = getComputedStyle(element);
        return [style.backgroundColor, getComputedStyle(element.querySelector('.an-tile-value')!).color];
      });
      const ratio = (Math.max(luminance(tint), luminance(text)) + 0.05) / (Math.min(luminance(tint), luminance(text)) + 0.05);
      expect(ratio, `KPI text ${text} on ${tint}`).toBeGreaterThan(7);
      expect(luminance(tint) < 0.05, `KPI tint ${tint}`).toBe(scheme === 'dark');
      // The chart's line is the accent of the theme.
      expect(await lineColor(page)).toBe(scheme === 'dark' ? 'rgb(165, 180, 252)' : 'rgb(67, 56, 202)');

      // Filtered on the sign-up goal, the line takes its dark grey in light, its light grey in dark.
      await page.goto(`${server.base}/websites/${websiteId}?filter_goal=is:signup`);
      await page.locator('.an-chip').filter({ hasText: 'Sign-up' }).first().waitFor();
      await page.locator('.an-chart-canvas[data-ticks]').waitFor();
      await expect.poll(() => lineColor(page)).toBe(scheme === 'dark' ? 'rgb(209, 213, 219)' : 'rgb(55, 65, 81)');
      await checkState(page, scheme, 'analytics-goal-filter');

      // A details dialog.
      await page.goto(`${server.base}/websites/${websiteId}`);
      await page.getByRole('button', { name: 'Details of countries' }).click();
      const dialog = page.getByRole('dialog', { name: 'Countries' });
      await dialog.getByRole('button', { name: 'Netherlands' }).waitFor();
      const dialogBackground = await dialog.evaluate((element) => getComputedStyle(element).backgroundColor);
      expect(luminance(dialogBackground) < 0.05, `dialog ${dialogBackground}`).toBe(scheme === 'dark');
      await checkState(page, scheme, 'analytics-details');
      await page.keyboard.press('Escape');

      // Every settings section.
      for (const [tab, text] of [
        ['general', 'Time zone'],
        ['keys', 'Backend server'],
        ['goals', 'signup'],
        ['funnels', 'Pricing to sign-up'],
        ['alerts', null],
        ['team', 'invited.person@example.test'],
        ['integrations', 'Shopify (provider-five)'],
        ['delete', null],
      ] as const) {
        await page.goto(`${server.base}/websites/${websiteId}/settings?tab=${tab}`);
        await page.locator('.tab.current').last().waitFor();
        if (text) await page.getByText(text).first().waitFor();
        await checkState(page, scheme, `settings-${tab}`);
        if (tab === 'keys') {
          // A new key, shown once in its warning-coloured box.
          await page.getByLabel("New key's name").fill(`Export ${scheme}`);
          await page.getByRole('button', { name: 'Create key' }).click();
          await page.locator('.secret-once').waitFor();
          await checkState(page, scheme, 'settings-keys-created');
        }
        if (tab === 'goals') {
          // The goal's dialog, with its palette of colours.
          await page.locator('.table-wrap tr').filter({ hasText: 'signup' }).getByRole('button', { name: /^Edit/ }).click();
          const goalDialog = page.getByRole('dialog', { name: 'How "signup" is shown' });
          await goalDialog.getByLabel('Display name').waitFor();
          await checkState(page, scheme, 'settings-goal-dialog');
          await page.keyboard.press('Escape');
        }
      }

      await page.goto(`${server.base}/account`);
      await page.getByRole('region', { name: 'API tokens' }).getByRole('cell', { name: 'Deploy script', exact: true }).waitFor();
      await checkState(page, scheme, 'account');
      // A refused password: the error colours at the field.
      await page.getByLabel('Current password').fill('not my password at all');
      await page.getByLabel('New password', { exact: true }).fill('a new password 789');
      await page.getByLabel('New password, again').fill('a new password 789');
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.locator('.field.has-error .field-error').waitFor();
      await checkState(page, scheme, 'account-password-error');

      const missing = await page.goto(`${server.base}/no-such-page`);
      expect(missing?.status()).toBe(404);
      await page.getByRole('heading', { level: 1, name: 'Not found' }).waitFor();
      await checkState(page, scheme, 'not-found');
      expect(server.pageErrors).toEqual([]);
    });
  }

  it('redraws the chart in the new colours when the system switches scheme under an open page', { timeout: 60_000 }, async () => {
    const page = await schemePage('light');
    await page.goto(`${server.base}/websites/${websiteId}`);
    await page.locator('.an-chart-canvas[data-ticks]').waitFor();
    expect(await lineColor(page)).toBe('rgb(67, 56, 202)');
    await page.locator('.an-chart canvas').evaluate((canvas) => canvas.setAttribute('data-drawn-for', 'light'));

    await page.emulateMedia({ colorScheme: 'dark' });
    await expect.poll(() => page.evaluate(() => getComputedStyle(document.body).backgroundColor).then(luminance)).toBeLessThan(0.05);
    await expect.poll(() => lineColor(page)).toBe('rgb(165, 180, 252)');
    // A new canvas: the old one, drawn in the light colours, is gone.
    expect(await page.locator('.an-chart canvas[data-drawn-for]').count()).toBe(0);
    await screenshot(page, 'dark', 'switched-from-light');
    expect(await axeViolations(page), 'axe-core after the switch').toEqual([]);

    await page.emulateMedia({ colorScheme: 'light' });
    await expect.poll(() => lineColor(page)).toBe('rgb(67, 56, 202)');
    expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe(LIGHT_BODY);
    expect(server.pageErrors).toEqual([]);
  });
});
