import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { unzipSync } from 'fflate';
import { parse } from 'csv-parse/sync';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { CHROME, pageview } from './helpers/browser-events.ts';
import { DESKTOP, axeViolations, haveChromium, sayWhenChromiumIsMissing, screenshot, useDashboardServer } from './helpers/dashboard-browser.ts';

// Segments and export in the dashboard (issue 37 items 2 and 5), in Chromium: the owner saves the
// current filters as a shared segment, applies it on an unfiltered page, downloads the period's
// reports as a zip whose overview matches the filtered tile, and finds the raw export in the
// website settings; axe-core finds nothing on what was added.

const GERMAN_IP = '217.0.0.1';
const BRITISH_IP = '81.2.69.142';

sayWhenChromiumIsMissing('segments and export in Chromium');

describe.skipIf(!haveChromium)('segments and export in Chromium', () => {
  const server = useDashboardServer('export-segments-e2e');

  async function openPage(cookie: string, path: string): Promise<Page> {
    const page = await server.page(cookie, { viewport: DESKTOP, acceptDownloads: true });
    page.setDefaultTimeout(12_000);
    await page.goto(`${server.base}${path}`);
    await page.getByRole('region', { name: 'Overview' }).waitFor();
    await page.waitForLoadState('networkidle');
    return page;
  }

  const visitorsTile = async (page: Page) => {
    await page.waitForFunction(() => !document.querySelector('.an-overview[aria-busy="true"]'));
    return (await page.getByRole('button', { name: /^Unique visitors/ }).locator('.an-tile-value').textContent())?.trim();
  };

  it('saves and applies a segment, downloads the reports, and offers the raw export', { timeout: 150_000 }, async () => {
    const { owner, website } = await server.ownerWithWebsite();
    for (const ip of [GERMAN_IP, GERMAN_IP, BRITISH_IP]) {
      await server.track(pageview(website, { visitorId: randomUUID(), sessionId: `s${randomUUID()}`, href: `https://${website.domain}/`, referrer: null }), { ip, userAgent: CHROME });
    }

    const page = await openPage(owner.cookie, `/websites/${website.id}?filter_country=is:DE`);
    expect(await visitorsTile(page)).toBe('2');
    await page.getByRole('button', { name: 'Save filters as segment' }).click();
    await page.getByLabel('Segment name').fill('Germany');
    await page.getByLabel('Share with the team').check();
    await page.getByRole('button', { name: 'Save segment' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Saved segment' }).count()).toBe(1);
    expect(await axeViolations(page), 'axe-core, segment saved').toEqual([]);
    await screenshot(page, 'segments-saved');

    // On an unfiltered page the segment puts its filters back.
    await page.goto(`${server.base}/websites/${website.id}`);
    await page.getByRole('region', { name: 'Overview' }).waitFor();
    expect(await visitorsTile(page)).toBe('3');
    await page.getByRole('combobox', { name: 'Segment', exact: true }).selectOption({ label: 'Germany (team)' });
    await page.waitForURL(/filter_country=is(%3A|:)DE/);
    expect(await visitorsTile(page)).toBe('2');

    // The export holds the filtered period.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Export CSV' }).click()]);
    expect(download.suggestedFilename()).toMatch(/^sightline-reports-.*\.zip$/);
    const files = unzipSync(new Uint8Array(readFileSync((await download.path())!)));
    const overview = parse(Buffer.from(files['overview.csv']!).toString('utf8'), { columns: true }) as Record<string, string>[];
    expect(overview[0]!.visitors).toBe('2');
    expect(Object.keys(files)).toContain('countries.csv');

    // Its author deletes it from the same row.
    await page.getByRole('button', { name: 'Delete segment “Germany”' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Deleted segment' }).count()).toBe(1);
    expect(await server.db.kysely.selectFrom('segments').selectAll().where('website_id', '=', website.id).execute()).toEqual([]);

    // The raw export sits in the website settings, for the owner.
    await page.goto(`${server.base}/websites/${website.id}/settings?tab=export`);
    const raw = page.getByRole('link', { name: 'Download raw data (.ndjson)' });
    await raw.waitFor();
    expect(await axeViolations(page), 'axe-core, export settings').toEqual([]);
    await screenshot(page, 'export-settings');
    const [rawDownload] = await Promise.all([page.waitForEvent('download'), raw.click()]);
    const lines = readFileSync((await rawDownload.path())!, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(lines[0]).toMatchObject({ format: 'sightline-export', version: 1, websiteId: website.id });
    expect(lines.filter((line) => line.type === 'event')).toHaveLength(3);
    await page.context().close();
  });
});
