import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { DESKTOP, axeViolations, haveChromium, sayWhenChromiumIsMissing, screenshot, useDashboardServer } from './helpers/dashboard-browser.ts';
import { exportFile, pageviewRecord, websiteRecord } from './helpers/sightline-export-file.ts';

// Importing Sightline's own export from the website settings' Imports tab in a real browser
// (Chromium, the built dashboard, Sightline on a real port with its import worker): a cut file is
// refused with the server's reason; the gzip is uploaded, its progress bar followed to the end,
// its report read per record type, the events on the analytics API; then it is deleted. axe-core
// is clean at 1280 px.

sayWhenChromiumIsMissing('the own export\'s import in the dashboard in Chromium');

describe.skipIf(!haveChromium)('the own export\'s import in the dashboard in Chromium', () => {
  // Chunks of 3 records and 900 of them: the bar is read while it moves.
  const server = useDashboardServer('ownimport-e2e', { imports: { jobs: true, maxUploadBytes: 1024 * 1024, chunkRows: 3 } });
  const scratch = mkdtempSync(join(tmpdir(), 'sightline-ownimport-e2e-'));
  const card = (page: Page): Locator => page.locator('section.card#imports');
  const hex = (n: number) => n.toString(16).padStart(24, '0');

  it('uploads the export, shows its progress to the end and its report, and deletes it', { timeout: 180_000 }, async () => {
    const { owner, website } = await server.ownerWithWebsite();
    const text = exportFile([
      websiteRecord({ timezone: 'UTC' }),
      ...Array.from({ length: 900 }, (_, i) => pageviewRecord(hex(0xe000 + i), `e2e-v${i % 25}`, new Date(Date.UTC(2026, 2, 2 + (i % 3), 8, i % 60)).toISOString())),
    ]);
    const exported = join(scratch, 'sightline-moved.ndjson.gz');
    writeFileSync(exported, gzipSync(text));
    const cut = join(scratch, 'cut.ndjson');
    writeFileSync(cut, text.split('\n').slice(0, 40).join('\n'));

    const page = await server.page(owner.cookie, { viewport: DESKTOP, locale: 'en-US' });
    await page.goto(`${server.base}/websites/${website.id}/settings?tab=imports`);
    const imports = card(page);
    await imports.getByRole('heading', { level: 2, name: 'Imports' }).waitFor();
    await page.waitForLoadState('networkidle');
    const form = imports.getByRole('form', { name: 'Import a Sightline export' });

    await form.getByLabel('Sightline export (.ndjson or .ndjson.gz)').setInputFiles(cut);
    await form.getByRole('button', { name: 'Upload export' }).click();
    await expect.poll(() => imports.locator('.error, [role="alert"]').first().textContent()).toMatch(/cut short/);

    await form.getByLabel('Sightline export (.ndjson or .ndjson.gz)').setInputFiles(exported);
    await form.getByRole('button', { name: 'Upload export' }).click();
    await imports.getByText(/sightline-moved\.ndjson\.gz is uploaded/).waitFor();
    const row = imports.getByRole('row').filter({ hasText: 'Sightline export of moved.example.com' });
    // While it runs, the bar and the records read; then done.
    const bar = row.getByRole('progressbar', { name: /Progress of Sightline export of moved\.example\.com/ });
    const seen = new Set<string>();
    for (let i = 0; i < 600 && !seen.has('100'); i++) {
      seen.add((await bar.getAttribute('value')) ?? '');
      await page.waitForTimeout(100);
    }
    // The bar only ever shows a share of the import (how many values it passed through depends on
    // the machine's speed against the list's 1.5-s reads: on an idle machine it goes 0 -> 100).
    expect([...seen].every((value) => value === '' || (Number(value) >= 0 && Number(value) <= 100)), `values seen: ${[...seen].join(', ')}`).toBe(true);
    expect(seen.has('100')).toBe(true);
    await row.getByText('Done', { exact: true }).waitFor({ timeout: 60_000 });
    expect(await bar.getAttribute('value')).toBe('100');
    await row.getByText('2026-03-02 to 2026-03-04').waitFor();
    await row.getByText('901 kept, 0 skipped').waitFor();
    await row.getByText('Report').click();
    await row.getByText(/event: 900 rows read, 900 kept, 0 skipped/).waitFor();
    await row.getByText(/took the exported settings/).waitFor();
    await screenshot(page, 'ownimport-done');
    expect(await axeViolations(page), 'axe-core at 1280 px, the own export imported, its report open').toEqual([]);

    const overview = await server.call('GET', `/api/v1/analytics/overview?websiteId=${website.id}&startAt=2026-03-01&endAt=2026-03-31`, undefined, owner);
    expect(overview.json.data[0]).toMatchObject({ visitors: 25, pageviews: 900 });

    await row.getByRole('button', { name: /Delete the import Sightline export of moved\.example\.com/ }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete import' }).click();
    await imports.getByText('No import yet.').waitFor();
    expect(server.pageErrors).toEqual([]);
    await page.close();
  });
});
