import { describe, expect, it } from 'vitest';
import { digestSecret } from '../src/auth/sessions.ts';
import { newId } from '../src/lib/ids.ts';
import { DESKTOP, PHONE, axeViolations, haveChromium, sayWhenChromiumIsMissing, screenshot, useDashboardServer } from './helpers/dashboard-browser.ts';

// Reports by mail in the dashboard (issue 37 item 4), in Debian's Chromium against the built
// dashboard: the owner turns the website's reports on; a viewer reads the switches without
// changing them and makes their own choice (no weekly, a monthly). axe-core is clean on the
// section at 1280 and 390 px, and on the unsubscribe page a mail links to (no session).

sayWhenChromiumIsMissing('reports by mail in the dashboard in Chromium');

describe.skipIf(!haveChromium)('reports by mail in the dashboard in Chromium', () => {
  const server = useDashboardServer('mail-reports-e2e');
  let websiteId = '';

  it("turns the website's reports on, saves a viewer's own choice, and passes axe-core", { timeout: 120_000 }, async () => {
    const { owner, website } = await server.ownerWithWebsite();
    websiteId = website.id;
    const page = await server.page(owner.cookie, { viewport: DESKTOP });
    await page.goto(`${server.base}/websites/${website.id}/settings?tab=mail`);
    const reports = page.getByRole('checkbox', { name: 'Mail reports to the team' });
    await reports.waitFor();
    await page.getByRole('checkbox', { name: 'Weekly report' }).waitFor();
    expect(await reports.isChecked()).toBe(false);
    await reports.check();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('Saved.').waitFor();
    const read = await server.call('GET', `/api/v1/admin/websites/${website.id}`, undefined, owner);
    expect(read.json.data[0]).toMatchObject({ sendWeeklyReports: true, sendViralTrafficAlerts: false });
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'mail-reports-owner');

    const viewerCookie = await server.memberSession(website.id, 'viewer');
    const viewer = await server.page(viewerCookie, { viewport: PHONE, isMobile: true, hasTouch: true });
    await viewer.goto(`${server.base}/websites/${website.id}/settings?tab=mail`);
    await viewer.getByRole('checkbox', { name: 'Weekly report' }).waitFor();
    expect(await viewer.getByRole('checkbox', { name: 'Mail reports to the team' }).isDisabled()).toBe(true);
    expect(await viewer.getByRole('button', { name: 'Save', exact: true }).count()).toBe(0);
    await viewer.getByRole('checkbox', { name: 'Weekly report' }).uncheck();
    await viewer.getByRole('checkbox', { name: 'Monthly report' }).check();
    await viewer.getByRole('button', { name: 'Save my choice' }).click();
    await viewer.getByText('Saved.').waitFor();
    const rows = await server.db.kysely.selectFrom('mail_report_subscriptions').select(['kind', 'enabled']).where('website_id', '=', website.id).orderBy('kind').execute();
    expect(rows.map((row) => [row.kind, Boolean(row.enabled)])).toEqual([
      ['monthly', true],
      ['spike', true],
      ['weekly', false],
    ]);
    expect(await axeViolations(viewer)).toEqual([]);
    await screenshot(viewer, 'mail-reports-viewer-phone');
  });

  it('shows an accessible unsubscribe page without a session, and unsubscribes with its button', { timeout: 60_000 }, async () => {
    const website = { id: websiteId };
    const owner = await server.db.kysely.selectFrom('website_members').select('account_id').where('website_id', '=', website.id).where('role', '=', 'owner').executeTakeFirstOrThrow();
    const token = 'UnsubscribeTestToken0123456789abcdefghijKLM';
    await server.db.kysely
      .insertInto('mail_report_deliveries')
      .values({ id: newId(), website_id: website.id, account_id: owner.account_id, kind: 'weekly', period_start: '2026-03-01T23:00:00.000Z', unsubscribe_digest: digestSecret(token), created_at: new Date().toISOString() })
      .execute();
    const context = await server.browser.newContext({ viewport: PHONE });
    const page = await context.newPage();
    await page.goto(`${server.base}/mail/unsubscribe/${token}`);
    await page.getByRole('heading', { name: 'Unsubscribe' }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Unsubscribe' }).click();
    await page.getByRole('heading', { name: 'Unsubscribed' }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    const row = await server.db.kysely.selectFrom('mail_report_subscriptions').select(['kind', 'enabled']).where('website_id', '=', website.id).where('account_id', '=', owner.account_id).executeTakeFirstOrThrow();
    expect([row.kind, Boolean(row.enabled)]).toEqual(['weekly', false]);
    await context.close();
  });
});
