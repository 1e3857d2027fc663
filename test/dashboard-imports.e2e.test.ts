import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { DESKTOP, PHONE, axeViolations, haveChromium, sayWhenChromiumIsMissing, screenshot, useDashboardServer } from './helpers/dashboard-browser.ts';
import { plausibleExport, zipOf } from './helpers/plausible-export.ts';

// The website settings' Imports tab in a real browser (Debian's Chromium driving the built
// dashboard, Sightline on a real port with its import worker running): the owner uploads a
// Plausible export, follows the progress until it is done, reads the report, sees the imported
// visitors on the analytics API, then deletes the import, confirmed. A file that is not an export is
// refused with the server's reason; a viewer sees the list without the form. axe-core is clean at
// 1280 and 390 px.

sayWhenChromiumIsMissing('imports in the dashboard in Chromium');

describe.skipIf(!haveChromium)('imports in the dashboard in Chromium', () => {
  const server = useDashboardServer('imports-e2e', { imports: { jobs: true, maxUploadBytes: 1024 * 1024, chunkRows: 4 } });
  const scratch = mkdtempSync(join(tmpdir(), 'sightline-imports-e2e-'));

  const card = (page: Page): Locator => page.locator('section.card#imports');

  async function openImports(page: Page, websiteId: string) {
    await page.goto(`${server.base}/websites/${websiteId}/settings?tab=imports`);
    await card(page).getByRole('heading', { level: 2, name: 'Imports' }).waitFor();
    await page.waitForLoadState('networkidle');
  }

  it('uploads an export, shows its progress to the end and its report, and deletes it', { timeout: 120_000 }, async () => {
    const { owner, website } = await server.ownerWithWebsite();
    const exportZip = join(scratch, 'plausible-export.zip');
    writeFileSync(exportZip, zipOf(plausibleExport(['2025-01-01', '2025-01-02', '2025-01-03'])));
    const notExport = join(scratch, 'photos.zip');
    writeFileSync(notExport, zipOf({ 'photo.txt': 'not a table' }));

    const page = await server.page(owner.cookie, { viewport: DESKTOP, locale: 'en-US' });
    await openImports(page, website.id);
    const imports = card(page);
    await imports.getByText('No import yet.').waitFor();
    expect(await axeViolations(page), 'axe-core at 1280 px, no import').toEqual([]);

    // Not an export: the server's reason, nothing listed.
    await imports.getByLabel('Plausible export (.zip)').setInputFiles(notExport);
    await imports.getByRole('button', { name: 'Import' }).click();
    await expect.poll(() => imports.locator('.error, [role="alert"]').first().textContent()).toMatch(/no imported_\*\.csv/);

    await imports.getByLabel('Plausible export (.zip)').setInputFiles(exportZip);
    await imports.getByLabel('Label (optional)').fill('Old Plausible site');
    await imports.getByRole('button', { name: 'Import' }).click();
    await imports.getByText(/plausible-export\.zip is uploaded/).waitFor();
    const row = imports.getByRole('row').filter({ hasText: 'Old Plausible site' });
    // Polled until the job is done: the bar full, the days and rows shown.
    await row.getByText('Done', { exact: true }).waitFor({ timeout: 60_000 });
    expect(await row.getByRole('progressbar', { name: 'Progress of Old Plausible site' }).getAttribute('value')).toBe('100');
    await row.getByText('2025-01-01 to 2025-01-03').waitFor();
    await row.getByText('42 kept, 0 skipped').waitFor();
    await row.getByText('Report').click();
    await row.getByText(/imported_pages_20250101_20250103\.csv: 6 rows read, 6 kept, 0 skipped/).waitFor();
    await screenshot(page, 'imports-done');
    expect(await axeViolations(page), 'axe-core at 1280 px, an import done with its report open').toEqual([]);

    // The analytics API counts the imported visitors (10 + 11 + 12).
    const overview = await server.call('GET', `/api/v1/analytics/overview?websiteId=${website.id}&startAt=2025-01-01&endAt=2025-01-03`, undefined, owner);
    expect(overview.json.data[0].visitors).toBe(33);

    const phone = await server.page(owner.cookie, { viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 2, locale: 'en-US' });
    await openImports(phone, website.id);
    await card(phone).getByText('Old Plausible site', { exact: true }).waitFor();
    expect(await axeViolations(phone), 'axe-core at 390 px').toEqual([]);
    await phone.close();

    const viewer = await server.memberSession(website.id, 'viewer');
    const viewerPage = await server.page(viewer, { viewport: DESKTOP, locale: 'en-US' });
    await openImports(viewerPage, website.id);
    await card(viewerPage).getByText('Old Plausible site', { exact: true }).waitFor();
    expect(await card(viewerPage).getByLabel('Plausible export (.zip)').count()).toBe(0);
    expect(await card(viewerPage).getByRole('button', { name: /Delete/ }).count()).toBe(0);
    await viewerPage.close();

    await row.getByRole('button', { name: 'Delete the import Old Plausible site' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Delete import' }).click();
    await imports.getByText('The import “Old Plausible site” is deleted.').waitFor();
    await imports.getByText('No import yet.').waitFor();
    const after = await server.call('GET', `/api/v1/analytics/overview?websiteId=${website.id}&startAt=2025-01-01&endAt=2025-01-03`, undefined, owner);
    expect(after.json.data[0].visitors).toBe(0);
    expect(server.pageErrors).toEqual([]);
    await page.close();
  });
});
