import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { DESKTOP, PHONE, axeViolations, haveChromium, sayWhenChromiumIsMissing, screenshot, useDashboardServer } from './helpers/dashboard-browser.ts';
import { plausibleExport, zipOf } from './helpers/plausible-export.ts';
import { randomUUID } from 'node:crypto';
import { DateTime } from 'luxon';
import { FIXTURE_PASSWORD, createUmamiDatabase, insertEvents, insertSessions, insertWebsite } from './helpers/umami-fixture.ts';

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
    await imports.getByRole('button', { name: 'Import', exact: true }).click();
    await expect.poll(() => imports.locator('.error, [role="alert"]').first().textContent()).toMatch(/no imported_\*\.csv/);

    await imports.getByLabel('Plausible export (.zip)').setInputFiles(exportZip);
    await imports.getByLabel('Label (optional)').fill('Old Plausible site');
    await imports.getByRole('button', { name: 'Import', exact: true }).click();
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

describe.skipIf(!haveChromium)('an Umami import in the dashboard in Chromium', () => {
  const server = useDashboardServer('imports-umami-e2e', { imports: { jobs: true, maxUploadBytes: 1024 * 1024, chunkRows: 500, umamiChunkDays: 1 } });

  const card = (page: Page): Locator => page.locator('section.card#imports');

  async function openImports(page: Page, websiteId: string) {
    await page.goto(`${server.base}/websites/${websiteId}/settings?tab=imports`);
    await card(page).getByRole('heading', { level: 2, name: 'Imports' }).waitFor();
    await page.waitForLoadState('networkidle');
  }

  it('reads an Umami database: lists its websites, imports the chosen one with its progress to the end, never showing the password again', { timeout: 120_000 }, async () => {
    const { owner, website } = await server.ownerWithWebsite();
    const umami = await createUmamiDatabase();
    try {
      const umamiWebsite = await insertWebsite(umami.client, 'Old blog', website.domain);
      await insertWebsite(umami.client, 'Another site', 'another.example');
      const session = { id: randomUUID(), browser: 'chrome', os: 'Mac OS', device: 'laptop', country: 'FR', region: 'FR-IDF' };
      await insertSessions(umami.client, umamiWebsite, [session]);
      const visit = randomUUID();
      const at = DateTime.fromISO('2025-02-01T12:00:00Z');
      await insertEvents(umami.client, umamiWebsite, [
        { sessionId: session.id, visitId: visit, at, type: 1, path: '/', hostname: website.domain },
        { sessionId: session.id, visitId: visit, at: at.plus({ minutes: 2 }), type: 1, path: '/pricing', hostname: website.domain },
        { sessionId: session.id, visitId: randomUUID(), at: at.plus({ days: 1 }), type: 1, path: '/', hostname: website.domain },
      ]);

      const page = await server.page(owner.cookie, { viewport: DESKTOP, locale: 'en-US' });
      await openImports(page, website.id);
      const imports = card(page);
      const url = imports.getByLabel('Umami database URL', { exact: true });
      expect(await url.getAttribute('type')).toBe('password');

      // A host the operator does not allow: the server's reason at the field.
      await url.fill('postgres://umami:pw@10.9.8.7:5432/umami');
      await imports.getByRole('button', { name: 'List its websites' }).click();
      await imports.getByText(/10\.9\.8\.7.*IMPORT_UMAMI_HOSTS/).waitFor();

      await url.fill(umami.url);
      await imports.getByRole('button', { name: 'List its websites' }).click();
      await imports.getByText(/The Umami database has 2 websites/).waitFor();
      await imports.getByLabel('Umami website', { exact: true }).selectOption(umamiWebsite);
      expect(await axeViolations(page), 'axe-core at 1280 px, the Umami websites listed').toEqual([]);
      await imports.getByRole('button', { name: 'Import from Umami' }).click();
      await imports.getByText(/The import of Old blog runs in the background/).waitFor();

      const row = imports.getByRole('row').filter({ hasText: 'Umami Old blog' });
      await row.getByText('Done', { exact: true }).waitFor({ timeout: 60_000 });
      expect(await row.getByRole('progressbar').getAttribute('value')).toBe('100');
      await row.getByRole('cell', { name: '2025-02-01 to 2025-02-02', exact: true }).waitFor();
      await row.getByText('Report').click();
      await row.getByText(/3 events read from the Umami website Old blog/).waitFor();
      expect(await page.content()).not.toContain(FIXTURE_PASSWORD);
      await screenshot(page, 'imports-umami-done');
      expect(await axeViolations(page), 'axe-core at 1280 px, an Umami import done').toEqual([]);

      const overview = await server.call('GET', `/api/v1/analytics/overview?websiteId=${website.id}&startAt=2025-02-01&endAt=2025-02-02`, undefined, owner);
      expect(overview.json.data[0]).toMatchObject({ visitors: 2, pageviews: 3, sessions: 2 });
      expect(server.pageErrors).toEqual([]);
      await page.close();
    } finally {
      await umami.drop();
    }
  });
});
