import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { CHROME, goal, pageview } from './helpers/browser-events.ts';
import { DESKTOP, PHONE, axeViolations, haveChromium, sayWhenChromiumIsMissing, screenshot, useDashboardServer } from './helpers/dashboard-browser.ts';

// The analytics page a daily user keeps open (issue 35 item 4), in Chromium: the filter editor
// builds an `is_not` and a `contains` filter kept in the URL (contains on a page and on a country) and read by every report; the chart
// draws a dashed comparison line read over the shifted range; a note is added from the chart and
// edited, then deleted; a viewer gets no note controls; the goals report shows each goal's
// conversion rate and opens its custom-property report; the KPI tiles fit one row at 1280 px;
// axe-core finds nothing in either theme.

const GERMAN_IP = '217.0.0.1';
const BRITISH_IP = '81.2.69.142';

sayWhenChromiumIsMissing('the filter editor, comparison and notes in Chromium');

describe.skipIf(!haveChromium)('the filter editor, comparison and notes in Chromium', () => {
  const server = useDashboardServer('filter-editor-e2e');
  const call = server.call;

  async function openPage(cookie: string, path: string, options: { viewport?: { width: number; height: number }; dark?: boolean } = {}): Promise<Page> {
    const page = await server.page(cookie, { viewport: options.viewport ?? DESKTOP, colorScheme: options.dark ? 'dark' : 'light' });
    page.setDefaultTimeout(12_000);
    await page.goto(`${server.base}${path}`);
    await page.getByRole('region', { name: 'Overview' }).waitFor();
    await page.waitForLoadState('networkidle');
    return page;
  }

  /** The number the "Unique visitors" tile shows. */
  const visitorsTile = async (page: Page) => {
    await page.waitForFunction(() => !document.querySelector('.an-overview[aria-busy="true"]'));
    return (await page.getByRole('button', { name: /^Unique visitors/ }).locator('.an-tile-value').textContent())?.trim();
  };

  async function axeInBothThemes(page: Page, state: string) {
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      expect(await axeViolations(page), `axe-core, ${state}, ${scheme}`).toEqual([]);
      await screenshot(page, `filter-editor-${state}-${scheme}`);
    }
    await page.emulateMedia({ colorScheme: 'light' });
  }

  it('builds is_not and contains filters, compares with the year before, and adds, edits and deletes a note', { timeout: 150_000 }, async () => {
    const { owner, website } = await server.ownerWithWebsite();
    const { domain } = website;
    const websiteId = website.id;
    const at = (path: string) => `https://${domain}${path}`;

    // Five visitors: three read the blog (two from Germany), two the pricing page (one from
    // Germany); a German pricing reader signs up with plan "pro", a German blog reader with "free".
    const visits: [string, string, string | null][] = [
      ['/blog/launch', GERMAN_IP, null],
      ['/blog/pricing-explained', GERMAN_IP, 'free'],
      ['/blog/launch', BRITISH_IP, null],
      ['/pricing', GERMAN_IP, 'pro'],
      ['/pricing', BRITISH_IP, null],
    ];
    for (const [path, ip, plan] of visits) {
      const visitor = { visitorId: randomUUID(), sessionId: `s${randomUUID()}` };
      await server.track(pageview(website, { ...visitor, href: at(path), referrer: null }), { ip, userAgent: CHROME });
      if (plan) await server.track(goal(website, 'signup', { plan }, { ...visitor, href: at(path) }), { ip, userAgent: CHROME });
    }
    const overview = async (query: string) => {
      const answer = await call('GET', `/api/v1/analytics/overview?websiteId=${websiteId}&${query}`, undefined, owner);
      expect(answer.status, answer.text).toBe(200);
      return answer.json.data[0].visitors as number;
    };
    const blogNotGerman = await overview('filter_page=contains:blog&filter_country=is_not:DE');
    expect(blogNotGerman).toBe(1);
    expect(await overview('filter_page=contains:blog')).toBe(3);

    const page = await openPage(owner.cookie, `/websites/${websiteId}`);
    const seriesReads: URL[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/api/v1/analytics/timeseries')) seriesReads.push(new URL(request.url()));
    });
    await expect.poll(() => visitorsTile(page)).toBe('5');

    // The KPI row: every tile on one line at 1280 px, the conversion rate's included.
    const tops = await page.locator('.an-tile-item').evaluateAll((items) => items.map((item) => Math.round(item.getBoundingClientRect().top)));
    expect(tops.length).toBeGreaterThanOrEqual(6);
    expect(new Set(tops).size, `tile tops ${tops.join(',')}`).toBe(1);

    // The editor from the "Filter" button: Page contains "blog".
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    let editor = page.getByRole('dialog', { name: 'Add filter' });
    await editor.waitFor();
    await editor.getByLabel('Dimension').selectOption('page');
    expect(await editor.getByLabel('Operator').locator('option').allTextContents()).toEqual(['is', 'is not', 'contains', 'does not contain']);
    await editor.getByLabel('Operator').selectOption('contains');
    // Suggestions come from the pages report.
    await expect.poll(() => editor.locator('datalist option').evaluateAll((options) => options.map((option) => (option as HTMLOptionElement).value).sort())).toEqual([
      '/blog/launch',
      '/blog/pricing-explained',
      '/pricing',
    ]);
    await editor.getByRole('combobox', { name: /^Value/ }).fill('blog');
    await editor.getByRole('button', { name: 'Add value' }).click();
    await editor.getByRole('list', { name: 'Chosen values' }).getByText('blog').waitFor();
    await axeInBothThemes(page, 'editor');
    await editor.getByRole('button', { name: 'Apply filter' }).click();
    await page.waitForURL((url) => url.searchParams.get('filter_page') === 'contains:blog');
    await expect.poll(() => visitorsTile(page)).toBe('3');

    // A second filter: Country is not Germany, two values typed then one removed.
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    editor = page.getByRole('dialog', { name: 'Add filter' });
    await editor.getByLabel('Dimension').selectOption('country');
    expect(await editor.getByLabel('Operator').locator('option').allTextContents()).toEqual(['is', 'is not', 'contains', 'does not contain']);
    await editor.getByLabel('Operator').selectOption('is_not');
    await expect.poll(() => editor.locator('datalist option').evaluateAll((options) => options.map((option) => (option as HTMLOptionElement).value).sort())).toEqual(['DE', 'GB']);
    for (const value of ['DE', 'GB']) {
      await editor.getByRole('combobox', { name: /^Value/ }).fill(value);
      await editor.getByRole('combobox', { name: /^Value/ }).press('Enter');
    }
    await editor.getByRole('button', { name: 'Remove value United Kingdom' }).click();
    await editor.getByRole('button', { name: 'Apply filter' }).click();
    await page.waitForURL((url) => url.searchParams.get('filter_country') === 'is_not:DE');
    expect(new URL(page.url()).searchParams.get('filter_page')).toBe('contains:blog');
    await expect.poll(() => visitorsTile(page)).toBe(String(blogNotGerman));
    const chips = page.getByRole('group', { name: 'Active filters' });
    await chips.getByRole('button', { name: 'Change filter: Page contains blog' }).waitFor();
    await chips.getByRole('button', { name: 'Change filter: Country is not DE' }).waitFor();
    await axeInBothThemes(page, 'filtered');

    // The URL keeps both: a reload shows the same numbers.
    const filtered = page.url();
    await page.reload();
    await page.getByRole('region', { name: 'Overview' }).waitFor();
    await expect.poll(() => visitorsTile(page)).toBe(String(blogNotGerman));
    expect(page.url()).toBe(filtered);

    // Changing a chip: Page contains blog -> Page is not /pricing, in its place.
    await chips.getByRole('button', { name: 'Change filter: Page contains blog' }).click();
    editor = page.getByRole('dialog', { name: 'Change filter' });
    await editor.getByRole('button', { name: 'Remove value blog' }).click();
    await editor.getByLabel('Operator').selectOption('is_not');
    await editor.getByRole('combobox', { name: /^Value/ }).fill('/pricing');
    await editor.getByRole('button', { name: 'Apply filter' }).click();
    await page.waitForURL((url) => url.searchParams.get('filter_page') === 'is_not:/pricing');
    await expect.poll(() => visitorsTile(page)).toBe(String(await overview('filter_page=is_not:/pricing&filter_country=is_not:DE')));
    await chips.getByRole('button', { name: 'Remove filter: Country is not DE' }).click();
    await chips.getByRole('button', { name: 'Remove filter: Page is not /pricing' }).click();
    await page.waitForURL((url) => ![...url.searchParams.keys()].some((name) => name.startsWith('filter_')));
    await expect.poll(() => visitorsTile(page)).toBe('5');

    // contains on a dimension that is not a path: Country contains "b" matches the code GB.
    const british = await overview('filter_country=contains:b');
    expect(british).toBe(2);
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    editor = page.getByRole('dialog', { name: 'Add filter' });
    await editor.getByLabel('Dimension').selectOption('country');
    await editor.getByLabel('Operator').selectOption('contains');
    await editor.getByRole('combobox', { name: 'Value (part of the code, such as US)' }).fill('b');
    await editor.getByRole('button', { name: 'Apply filter' }).click();
    await page.waitForURL((url) => url.searchParams.get('filter_country') === 'contains:b');
    await expect.poll(() => visitorsTile(page)).toBe(String(british));
    await chips.getByRole('button', { name: 'Remove filter: Country contains b' }).click();
    await page.waitForURL((url) => !url.searchParams.has('filter_country'));
    await expect.poll(() => visitorsTile(page)).toBe('5');

    // Goals: conversion rate per goal (2 of 5 visitors signed up), and its property report.
    const goals = page.getByRole('region', { name: 'Goals' });
    const signupRow = goals.getByRole('row', { name: /signup/ });
    await expect.poll(async () => (await signupRow.getByRole('cell').allTextContents()).map((text) => text.trim())).toEqual(['2', '2', '40%']);
    await goals.getByRole('button', { name: 'Properties of signup' }).click();
    const properties = page.getByRole('dialog', { name: 'Properties of signup' });
    const planTable = properties.getByRole('table', { name: 'plan' });
    await planTable.waitFor();
    expect((await planTable.getByRole('row', { name: /pro/ }).getByRole('cell').allTextContents()).map((text) => text.trim())).toEqual(['1', '1']);
    expect((await planTable.getByRole('row', { name: /free/ }).getByRole('cell').allTextContents()).map((text) => text.trim())).toEqual(['1', '1']);
    await axeInBothThemes(page, 'goal-properties');
    await properties.getByRole('button', { name: 'Close' }).click();

    // Per row with a goal filter: the pages' rates are converting visitors / the page's visitors.
    await goals.getByRole('button', { name: 'signup', exact: true }).click();
    await page.waitForURL((url) => url.searchParams.get('filter_goal') === 'is:signup');
    const pages = page.getByRole('region', { name: 'Top pages' });
    await expect
      .poll(async () => (await pages.getByRole('row', { name: /^\/pricing/ }).getByRole('cell').allTextContents()).map((text) => text.trim()))
      .toEqual(['1', '50%']);
    await chips.getByRole('button', { name: 'Remove filter: Goal is signup' }).click();

    // Compare with the year before: a second, dashed line read over the same days a year earlier.
    await page.getByLabel('Compare').selectOption('year');
    await page.waitForURL((url) => url.searchParams.get('compare') === 'year');
    const chart = page.locator('.an-chart-canvas');
    await expect.poll(() => chart.getAttribute('aria-label')).toMatch(/dashed: year before \(\d{4}-\d{2}-\d{2} – \d{4}-\d{2}-\d{2}\), total 0/);
    const unfiltered = seriesReads.filter((url) => ![...url.searchParams.keys()].some((name) => name.startsWith('filter_')));
    const ranges = [...new Set(unfiltered.map((url) => `${url.searchParams.get('startAt')}|${url.searchParams.get('endAt')}`))].sort();
    expect(ranges, ranges.join('\n')).toHaveLength(2);
    const [before, now] = ranges.map((range) => range.split('|')) as [string[], string[]];
    const yearEarlier = (day: string) => `${Number(day.slice(0, 4)) - 1}${day.slice(4)}`;
    expect(before).toEqual(now.map(yearEarlier));
    expect(await page.locator('.an-chart .u-series').count()).toBe(3);
    expect(await page.locator('.an-chart .u-series').nth(2).textContent()).toContain('Year before');
    await axeInBothThemes(page, 'compared');

    // A note: from the "Add note" button, then changed from the list, then deleted.
    await page.getByRole('button', { name: 'Add note' }).click();
    let noteDialog = page.getByRole('dialog', { name: 'Add note' });
    await noteDialog.getByLabel('Note', { exact: true }).fill('Launched the blog');
    await axeInBothThemes(page, 'note-dialog');
    await noteDialog.getByRole('button', { name: 'Add note' }).click();
    await page.getByRole('button', { name: 'Edit the note “Launched the blog”' }).waitFor();
    const notesPath = `/api/v1/admin/websites/${websiteId}/notes`;
    let notes = await call('GET', notesPath, undefined, owner);
    expect(notes.json.data.map((note: any) => note.text)).toEqual(['Launched the blog']);
    const noteDay = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Paris' }).format(new Date(notes.json.data[0].timestamp));
    expect(noteDay).toBe(new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Paris' }).format(new Date()));
    await expect.poll(() => page.locator('.an-note-marker').count()).toBe(1);
    await axeInBothThemes(page, 'note-added');

    await page.locator('.an-note-marker').click();
    noteDialog = page.getByRole('dialog', { name: 'Edit note' });
    await noteDialog.getByLabel('Note', { exact: true }).fill('Launched the blog and the newsletter');
    await noteDialog.getByRole('button', { name: 'Save note' }).click();
    await page.locator('.an-note-text', { hasText: 'Launched the blog and the newsletter' }).waitFor();
    notes = await call('GET', notesPath, undefined, owner);
    expect(notes.json.data.map((note: any) => note.text)).toEqual(['Launched the blog and the newsletter']);

    // A click on the chart adds a note on the day under the pointer (today, the last bucket).
    const plot = await page.locator('.an-chart .u-over').boundingBox();
    await page.mouse.click(plot!.x + plot!.width - 2, plot!.y + plot!.height / 2);
    noteDialog = page.getByRole('dialog', { name: 'Add note' });
    expect(await noteDialog.getByLabel('Day').inputValue()).toBe(noteDay);
    await noteDialog.getByRole('button', { name: 'Cancel' }).click();

    await page.getByRole('button', { name: 'Edit the note “Launched the blog and the newsletter”' }).click();
    await page.getByRole('dialog', { name: 'Edit note' }).getByRole('button', { name: 'Delete note' }).click();
    await expect.poll(() => page.locator('.an-note-marker').count()).toBe(0);
    notes = await call('GET', notesPath, undefined, owner);
    expect(notes.json.data).toEqual([]);

    // A viewer reads the notes but gets no control to write one (the API refuses them: 403).
    await call('POST', notesPath, { text: 'Visible to the viewer', timestamp: noteDay }, owner);
    const viewerCookie = await server.memberSession(websiteId, 'viewer');
    const viewerPage = await openPage(viewerCookie, `/websites/${websiteId}`);
    await viewerPage.locator('.an-note-text', { hasText: 'Visible to the viewer' }).waitFor();
    expect(await viewerPage.getByRole('button', { name: 'Add note' }).count()).toBe(0);
    expect(await viewerPage.getByRole('button', { name: /^Edit the note/ }).count()).toBe(0);
    await viewerPage.getByRole('button', { name: 'Filter', exact: true }).waitFor();

    // On a phone: the editor fits the screen.
    const phone = await openPage(owner.cookie, `/websites/${websiteId}`, { viewport: PHONE });
    await phone.getByRole('button', { name: 'Filter', exact: true }).click();
    const phoneEditor = phone.getByRole('dialog', { name: 'Add filter' });
    await phoneEditor.waitFor();
    const box = await phoneEditor.boundingBox();
    expect(box!.x).toBeGreaterThanOrEqual(0);
    expect(box!.x + box!.width).toBeLessThanOrEqual(PHONE.width);
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await axeInBothThemes(phone, 'phone-editor');
    expect(server.pageErrors).toEqual([]);
  });
});
