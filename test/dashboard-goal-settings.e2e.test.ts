import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { goal, pageview } from './helpers/browser-events.ts';
import { PHONE, SCREENSHOTS, axeViolations, haveChromium, sayWhenChromiumIsMissing, screenshot, useDashboardServer } from './helpers/dashboard-browser.ts';

// Goal customizations and the KPI on the analytics page, in a real browser: Debian's Chromium
// (never a downloaded browser) drives the built dashboard (dist/web, built by the suite's global
// setup) served by Sightline on a real port, on a fresh SQLite database. A website has page views,
// browser goals and a server goal (POST /api/v1/goals with a df_ key); the owner renames `signup`
// to "Sign-up" with a colour and a description, makes it the KPI in the green scheme, and adds a
// funnel ending on it. The page shows the display name, the swatch, the KPI card, the funnel step
// and the filter chip, passes axe-core at 1280 and 390 px, and shows the raw name again once the
// customization is deleted.


sayWhenChromiumIsMissing('goal customizations and the KPI on the analytics page in Chromium');

describe.skipIf(!haveChromium)('goal customizations and the KPI on the analytics page in Chromium', () => {
  const server = useDashboardServer('goal-settings-e2e');
  const call = server.call;

  const track = (body: unknown) => server.track(body);

  const signedInPage = (cookie: string, viewport = { width: 1280, height: 800 }, phone = false) =>
    server.page(cookie, { viewport, isMobile: phone, hasTouch: phone, deviceScaleFactor: phone ? 2 : 1 });

  const goalsCard = (page: Page): Locator => page.getByRole('region', { name: 'Goals' });
  const kpiCard = (page: Page): Locator => page.getByRole('region', { name: 'Overview' }).locator('.an-kpi');
  const funnelCard = (page: Page): Locator => page.getByRole('region', { name: 'Funnels' });

  /** The analytics page, once the goals report, the KPI's figures and the funnel have loaded. */
  async function openAnalytics(page: Page, websiteId: string, goalName: string) {
    await page.goto(`${server.base}/websites/${websiteId}`);
    await goalsCard(page).getByRole('button', { name: goalName, exact: true }).waitFor();
    await expect.poll(() => kpiCard(page).locator('.an-tile-value').textContent()).toBe('2');
    await funnelCard(page).getByRole('table').waitFor();
    await page.waitForLoadState('networkidle');
  }

  it('shows a customized goal, its colour and the KPI card wherever the goal appears, and the raw name once reset', { timeout: 90_000 }, async () => {
    // The owner (the first-run setup signs in), a website and a df_ key, through the API.
    const { owner, website } = await server.ownerWithWebsite();
    const { domain } = website;
    const websiteId = website.id;
    const keyAnswer = await call('POST', `/api/v1/admin/websites/${websiteId}/apikeys`, { name: 'server' }, owner);
    expect(keyAnswer.status, keyAnswer.text).toBe(200);
    const key = { key: keyAnswer.json.data[0].key as string };

    // Four visitors on /pricing and /: two sign up in the browser, one of them also upgrades (a
    // server goal), one subscribes to the newsletter (a goal left uncustomized).
    const visitors = Array.from({ length: 4 }, () => randomUUID());
    const at = (path: string) => `https://${domain}${path}`;
    const sessions = visitors.map(() => `s${randomUUID()}`);
    for (const [index, visitorId] of visitors.entries()) {
      await track(pageview(website, { visitorId, sessionId: sessions[index], href: at(index === 3 ? '/' : '/pricing'), referrer: null }));
    }
    await track(goal(website, 'signup', {}, { visitorId: visitors[0], sessionId: sessions[0], href: at('/pricing') }));
    await track(goal(website, 'signup', {}, { visitorId: visitors[1], sessionId: sessions[1], href: at('/pricing') }));
    await track(goal(website, 'newsletter', {}, { visitorId: visitors[2], sessionId: sessions[2], href: at('/pricing') }));
    const upgrade = await call('POST', '/api/v1/goals', { datafast_visitor_id: visitors[0], name: 'upgrade' }, key);
    expect(upgrade.status, upgrade.text).toBe(200);
    await expect
      .poll(async () => (await call('GET', `/api/v1/analytics/goals?websiteId=${websiteId}`, undefined, owner)).json?.data?.length, { timeout: 15_000 })
      .toBe(3);

    // Customizations use the palette: a colour outside it (#e11d48) is refused, naming it.
    const outside = await call('PATCH', `/api/v1/admin/websites/${websiteId}/goals/customizations`, { goalName: 'signup', color: '#e11d48' }, owner);
    expect(outside.status, outside.text).toBe(400);
    const customized = await call(
      'PATCH',
      `/api/v1/admin/websites/${websiteId}/goals/customizations`,
      { goalName: 'signup', displayName: 'Sign-up', color: '#ef4444', description: 'A visitor created an account' },
      owner,
    );
    expect(customized.status, customized.text).toBe(200);
    const kpi = await call('PUT', `/api/v1/admin/websites/${websiteId}`, { kpi: 'signup', kpiColorScheme: 'green' }, owner);
    expect(kpi.status, kpi.text).toBe(200);
    const funnel = await call(
      'POST',
      `/api/v1/admin/websites/${websiteId}/funnels`,
      { name: 'Pricing to sign-up', steps: [{ type: 'pageview', url: '/pricing' }, { type: 'goal', goalName: 'signup' }] },
      owner,
    );
    expect(funnel.status, funnel.text).toBe(200);

    const page = await signedInPage(owner.cookie);
    await openAnalytics(page, websiteId, 'Sign-up');

    // The goals report: the display name (not the raw one) with its swatch, the raw name and the
    // description on the second line and in the tooltip; other goals as they are.
    const goals = goalsCard(page);
    expect(await goals.getByRole('button', { name: 'signup', exact: true }).count()).toBe(0);
    const signupRow = goals.getByRole('row').filter({ has: page.getByRole('button', { name: 'Sign-up', exact: true }) });
    expect(await signupRow.locator('.an-swatch').evaluate((element) => getComputedStyle(element).backgroundColor)).toBe('rgb(239, 68, 68)');
    expect(await signupRow.locator('.an-key-sub').textContent()).toBe('signup · A visitor created an account');
    expect(await signupRow.getByRole('button', { name: 'Sign-up', exact: true }).getAttribute('title')).toBe('Filter: Sign-up (goal signup): A visitor created an account');
    await goals.getByRole('button', { name: 'upgrade', exact: true }).waitFor();
    await goals.getByRole('button', { name: 'newsletter', exact: true }).waitFor();
    expect(await goals.locator('.an-swatch').count()).toBe(1);

    // The KPI card: the goal's display name, 2 completions, 2 of 4 visitors converted, green.
    // (The card speaks the KPI scheme's colours, not the goal's: no swatch.)
    const card = kpiCard(page);
    expect(await card.locator('.an-tile-label').textContent()).toBe('KPISign-up');
    expect(await card.locator('.an-tile-value').textContent()).toBe('2');
    expect(await card.locator('.an-kpi-unit').textContent()).toBe('completions');
    expect(await card.locator('.an-kpi-rate').textContent()).toBe('50% conversion');
    expect(await card.evaluate((element) => getComputedStyle(element).backgroundColor)).toBe('rgb(240, 253, 244)');
    expect(await card.evaluate((element) => element.classList.contains('an-kpi-green'))).toBe(true);
    expect(await card.locator('.an-swatch').count()).toBe(0);

    // The funnel's goal step (named after its goal) shows the display name and the colour.
    const step = funnelCard(page).getByRole('row').filter({ hasText: 'Sign-up' });
    await step.waitFor();
    expect(await step.locator('.an-key-text').textContent()).toBe('Sign-up');
    expect(await step.locator('.an-swatch').evaluate((element) => getComputedStyle(element).backgroundColor)).toBe('rgb(239, 68, 68)');

    // The details dialog lists the goals the same way.
    await goals.getByRole('button', { name: 'Details of goal conversions' }).click();
    const dialog = page.getByRole('dialog', { name: 'Goal conversions' });
    await dialog.getByRole('button', { name: 'Sign-up', exact: true }).waitFor();
    expect(await dialog.locator('.an-key-sub').textContent()).toBe('signup · A visitor created an account');
    expect(await axeViolations(page), 'axe-core at 1280 px, goals dialog').toEqual([]);
    if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, 'goal-settings-dialog.png') });
    await dialog.getByRole('button', { name: 'Close' }).click();
    await dialog.waitFor({ state: 'hidden' });

    expect(await axeViolations(page), 'axe-core at 1280 px').toEqual([]);
    await screenshot(page, 'goal-settings-desktop');
    if (SCREENSHOTS) {
      await page.getByRole('region', { name: 'Overview' }).screenshot({ path: join(SCREENSHOTS, 'goal-settings-overview.png') });
      await goals.screenshot({ path: join(SCREENSHOTS, 'goal-settings-goals.png') });
      await funnelCard(page).screenshot({ path: join(SCREENSHOTS, 'goal-settings-funnel.png') });
    }

    // A click on the goal filters the page: the chip names the goal by its display name and the
    // chart's line takes the goal's colour (uPlot's legend marker carries the series' stroke).
    await goals.getByRole('button', { name: 'Sign-up', exact: true }).click();
    const chips = page.getByRole('group', { name: 'Active filters' });
    await chips.getByText('Goal is Sign-up').waitFor();
    expect(page.url()).toContain('signup');
    await expect
      .poll(() => page.locator('.an-chart .u-series:nth-child(2) .u-marker').evaluate((element) => getComputedStyle(element).borderColor))
      .toBe('rgb(239, 68, 68)');
    expect(await axeViolations(page), 'axe-core at 1280 px, filtered on the goal').toEqual([]);
    await screenshot(page, 'goal-settings-filtered');

    // On a phone: the same names, the KPI card within the screen, no sideways scrolling, axe-core clean.
    const phone = await signedInPage(owner.cookie, PHONE, true);
    await openAnalytics(phone, websiteId, 'Sign-up');
    const phoneCard = await kpiCard(phone).boundingBox();
    expect(phoneCard).not.toBeNull();
    expect(phoneCard!.x).toBeGreaterThanOrEqual(0);
    expect(phoneCard!.x + phoneCard!.width).toBeLessThanOrEqual(PHONE.width);
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    expect(await axeViolations(phone), 'axe-core at 390 px').toEqual([]);
    await screenshot(phone, 'goal-settings-phone');
    if (SCREENSHOTS) await phone.getByRole('region', { name: 'Overview' }).screenshot({ path: join(SCREENSHOTS, 'goal-settings-phone-overview.png') });

    // The alert form suggests the goals by their display names, and saves the raw name.
    await page.goto(`${server.base}/websites/${websiteId}/settings`);
    await page.getByRole('navigation', { name: 'Settings sections' }).getByRole('link', { name: 'Alerts' }).click();
    await page.getByRole('button', { name: 'New alert' }).click();
    const alertForm = page.getByRole('dialog');
    const goalInput = alertForm.getByRole('combobox', { name: /When this goal is completed/ });
    const listed = await page.locator(`datalist#${await goalInput.getAttribute('list')} option`).evaluateAll((options) =>
      options.map((option) => [(option as HTMLOptionElement).value, option.textContent]),
    );
    expect(listed).toContainEqual(['signup', 'Sign-up']);
    expect(listed).toContainEqual(['newsletter', '']);
    await alertForm.getByLabel('Name', { exact: true }).fill('Sign-ups');
    await goalInput.fill('signup');
    await alertForm.getByText('Shown as “Sign-up” in the reports.', { exact: false }).waitFor();
    await alertForm.getByLabel('Email message').fill('Someone signed up just now.');
    await alertForm.getByRole('button', { name: 'Create alert' }).click();
    await alertForm.waitFor({ state: 'hidden' });
    const alerts = await call('GET', `/api/v1/admin/websites/${websiteId}/alerts`, undefined, owner);
    expect(alerts.json.data.map((alert: { trigger: { goalName: string } }) => alert.trigger.goalName)).toEqual(['signup']);

    // So does the funnel form's goal step.
    await page.getByRole('navigation', { name: 'Settings sections' }).getByRole('link', { name: 'Funnels' }).click();
    await page.getByRole('button', { name: 'New funnel' }).click();
    const funnelForm = page.getByRole('dialog');
    await funnelForm.getByRole('combobox', { name: 'Type' }).first().selectOption('goal');
    const stepGoal = funnelForm.getByRole('combobox', { name: 'Goal name' }).first();
    const offered = await page.locator(`datalist#${await stepGoal.getAttribute('list')} option`).evaluateAll((options) =>
      options.map((option) => [(option as HTMLOptionElement).value, option.textContent]),
    );
    expect(offered).toContainEqual(['signup', 'Sign-up']);
    await funnelForm.getByRole('button', { name: 'Cancel' }).click();
    await funnelForm.waitFor({ state: 'hidden' });

    // Deleting the customization: the raw name everywhere again, no swatch; the KPI stays, named raw.
    const reset = await call('DELETE', `/api/v1/admin/websites/${websiteId}/goals/customizations?goalName=signup`, undefined, owner);
    expect(reset.status, reset.text).toBe(200);
    expect(reset.json.data[0]).toEqual({ deleted: true, goalName: 'signup' });
    await openAnalytics(page, websiteId, 'signup');
    expect(await goalsCard(page).getByRole('button', { name: 'Sign-up', exact: true }).count()).toBe(0);
    expect(await goalsCard(page).locator('.an-swatch, .an-key-sub').count()).toBe(0);
    expect(await kpiCard(page).locator('.an-tile-label').textContent()).toBe('KPIsignup');
    expect(await funnelCard(page).getByRole('row').filter({ hasText: 'signup' }).locator('.an-key-text').textContent()).toBe('signup');
    expect(await axeViolations(page), 'axe-core at 1280 px, customization deleted').toEqual([]);
    await screenshot(page, 'goal-settings-reset');

    expect(server.pageErrors).toEqual([]);
  });
});
