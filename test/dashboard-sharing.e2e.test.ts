import { type Server, createServer } from 'node:http';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewEvent } from '../src/modules/events/event.types.ts';
import { axeViolations, haveChromium, sayWhenChromiumIsMissing, screenshot, useDashboardServer } from './helpers/dashboard-browser.ts';
import { newEvent } from './helpers/factories.ts';
import { freePort } from './helpers/processes.ts';

// Shared dashboards (issue 37 item 3) in Debian's Chromium: the owner switches sharing on and
// creates a link in the website settings' Sharing section; a browser without any session opens
// the link and sees the analytics page read-only (no settings, no notes, no live view); a link
// with a password shows its password page first; ?embed=true renders without the page's chrome
// inside an iframe of another origin, which the page without it refuses; a revoked link says it
// is not available. axe-core reports no serious or critical violation on the shared page and the
// password page, in light and in dark.

const PASSWORD = 'shared dashboard password';
const DESKTOP = { width: 1280, height: 900 };

sayWhenChromiumIsMissing('shared dashboards, in Chromium');

describe.skipIf(!haveChromium)('shared dashboards, in Chromium', () => {
  const server = useDashboardServer('share-e2e');
  let owner: { cookie: string; csrfToken: string };
  let websiteId: string;
  let framing: Server;
  let framingBase: string;

  /** A page of a browser with no session at all. */
  async function anonymous(scheme: 'light' | 'dark' = 'light'): Promise<Page> {
    const page = await (await server.browser.newContext({ viewport: DESKTOP, colorScheme: scheme })).newPage();
    page.on('pageerror', (error) => server.pageErrors.push(`${page.url()}: ${error.message}`));
    return page;
  }

  /** A link, with the website's sharing on (the first test turns it on through the page). */
  async function createLink(body: Record<string, unknown>): Promise<{ id: string; url: string }> {
    const on = await server.call('PUT', `/api/v1/admin/websites/${websiteId}`, { isPublicDashboardEnabled: true }, owner);
    expect(on.status, on.text).toBe(200);
    const answer = await server.call('POST', `/api/v1/admin/websites/${websiteId}/shared-links`, body, owner);
    expect(answer.status, answer.text).toBe(200);
    return answer.json.data[0];
  }

  beforeAll(async () => {
    ({ owner, website: { id: websiteId } } = await server.ownerWithWebsite());
    const now = Date.now();
    const events: NewEvent[] = [];
    for (let index = 0; index < 3; index++) {
      events.push(newEvent(websiteId, `visitor-${index}`, { path: index ? '/pricing' : '/', occurredAt: new Date(now - (index + 1) * 3_600_000).toISOString() }));
    }
    await (server.app as any).events.write(events);
    await (server.app as any).events.flush();
    await server.call('POST', `/api/v1/admin/websites/${websiteId}/notes`, { text: 'A private team note' }, owner);
    // Another origin (another port) that frames the shared dashboard, as a blog would.
    const port = await freePort();
    framingBase = `http://127.0.0.1:${port}`;
    framing = createServer((request, response) => {
      const src = new URL(request.url ?? '/', framingBase).searchParams.get('src') ?? '';
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(`<!doctype html><html lang="en"><title>Blog</title><iframe id="embed" title="Analytics" src="${src.replace(/"/g, '')}" style="width:1200px;height:800px"></iframe>`);
    });
    await new Promise<void>((resolve) => framing.listen(port, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    await new Promise((resolve) => framing?.close(resolve));
  });

  it('lets the owner switch sharing on and create a link in the Sharing section, shown once', async () => {
    const page = await server.page(owner.cookie, { viewport: DESKTOP });
    await page.goto(`${server.base}/websites/${websiteId}/settings?tab=sharing`);
    const toggle = page.getByLabel('Let shared links open');
    await expect(toggle.isChecked()).resolves.toBe(false);
    const saved = page.waitForResponse((response) => response.url().endsWith(`/websites/${websiteId}`) && response.request().method() === 'PUT');
    // The box shows the saved setting: it turns on once the server said so.
    await toggle.click();
    expect((await saved).status()).toBe(200);
    await expect.poll(() => toggle.isChecked()).toBe(true);
    await page.getByLabel("New link's name").fill('Investors');
    await page.getByRole('button', { name: 'Create link' }).click();
    const box = page.getByRole('group', { name: 'Shared dashboard URL' });
    const url = (await box.locator('code').textContent())!;
    expect(url).toMatch(new RegExp(`^${server.base}/share/shr_[0-9A-Za-z]{32}$`));
    await expect(page.getByRole('group', { name: 'Embed code' }).locator('code').textContent()).resolves.toContain(`${url}?embed=true`);
    await page.getByRole('button', { name: 'I have copied it' }).click();
    await page.getByRole('cell', { name: 'Investors', exact: true }).waitFor();
    expect(await page.content()).not.toContain(url);
    expect(await axeViolations(page), 'axe-core, Sharing section').toEqual([]);
    await screenshot(page, 'share-01-settings');
    const website = await server.call('GET', `/api/v1/admin/websites/${websiteId}`, undefined, owner);
    expect(website.json.data[0].isPublicDashboardEnabled).toBe(true);
  });

  it('shows the analytics page read-only to a browser without a session, axe-clean in light and dark', async () => {
    const link = await createLink({ name: 'Wall screen' });
    for (const scheme of ['light', 'dark'] as const) {
      const page = await anonymous(scheme);
      await page.goto(link.url);
      await page.getByRole('heading', { level: 1, name: 'Wall screen' }).waitFor();
      const visitors = page.locator('.an-tile', { hasText: 'Visitors' }).first().locator('.an-tile-value');
      await expect.poll(() => visitors.textContent()).toBe('3');
      await page.getByText('/pricing').first().waitFor();
      await page.waitForLoadState('networkidle');
      expect(await page.getByRole('link', { name: 'Settings' }).count(), 'a Settings link').toBe(0);
      expect(await page.getByRole('button', { name: /Live view/ }).count(), 'a Live view button').toBe(0);
      expect(await page.getByRole('button', { name: /Add note/ }).count(), 'an Add note button').toBe(0);
      expect(await page.content()).not.toContain('A private team note');
      expect(await axeViolations(page), `axe-core, shared page, ${scheme}`).toEqual([]);
      await screenshot(page, `share-02-page-${scheme}`);
      await page.context().close();
    }
  });

  it('asks for the password first, refuses a wrong one, then shows the dashboard; axe-clean in light and dark', async () => {
    const link = await createLink({ name: 'Board', password: PASSWORD });
    for (const scheme of ['light', 'dark'] as const) {
      const page = await anonymous(scheme);
      await page.goto(link.url);
      await page.getByRole('heading', { level: 1, name: 'Password required' }).waitFor();
      expect(await axeViolations(page), `axe-core, password page, ${scheme}`).toEqual([]);
      await screenshot(page, `share-03-password-${scheme}`);
      await page.getByLabel('Password').fill('not the password at all');
      await page.getByRole('button', { name: 'Show the dashboard' }).click();
      await page.getByText('Wrong password for this shared dashboard').waitFor();
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Show the dashboard' }).click();
      await page.getByRole('heading', { level: 1, name: 'Board' }).waitFor();
      const visitors = page.locator('.an-tile', { hasText: 'Visitors' }).first().locator('.an-tile-value');
      await expect.poll(() => visitors.textContent()).toBe('3');
      // The cookie keeps the page open on a reload.
      await page.reload();
      await page.getByRole('heading', { level: 1, name: 'Board' }).waitFor();
      await page.context().close();
    }
  });

  it('renders without chrome inside another origin\'s iframe with embed=true, and is refused there without it', async () => {
    const link = await createLink({ name: 'Blog embed' });
    const page = await anonymous();
    await page.goto(`${framingBase}/?src=${encodeURIComponent(`${link.url}?embed=true`)}`);
    const frame = page.frameLocator('#embed');
    const visitors = frame.locator('.an-tile', { hasText: 'Visitors' }).first().locator('.an-tile-value');
    await expect.poll(() => visitors.textContent()).toBe('3');
    expect(await frame.locator('header.brand-only').count()).toBe(0);
    expect(await frame.locator('main.page.embed').count()).toBe(1);
    await screenshot(page, 'share-04-embed');

    const refused = await anonymous();
    const blocked = refused.waitForEvent('console', (message) => /frame-ancestors|Refused to (display|frame)/i.test(message.text()));
    await refused.goto(`${framingBase}/?src=${encodeURIComponent(link.url)}`);
    await blocked;
    const child = refused.frames().find((candidate) => candidate !== refused.mainFrame());
    const inside = child ? await child.locator('.an-page').count().catch(() => 0) : 0;
    expect(inside).toBe(0);
    await page.context().close();
    await refused.context().close();
  });

  it('says the link is not available once it is revoked, also in a browser that had unlocked it', async () => {
    const link = await createLink({ name: 'Temporary', password: PASSWORD });
    const page = await anonymous();
    await page.goto(link.url);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Show the dashboard' }).click();
    await page.getByRole('heading', { level: 1, name: 'Temporary' }).waitFor();
    const revoked = await server.call('DELETE', `/api/v1/admin/websites/${websiteId}/shared-links/${link.id}`, {}, owner);
    expect(revoked.status, revoked.text).toBe(200);
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'This shared dashboard is not available' }).waitFor();
    expect(await page.locator('.an-page').count()).toBe(0);
    expect(await axeViolations(page), 'axe-core, unavailable page').toEqual([]);
    await page.context().close();
    expect(server.pageErrors).toEqual([]);
  });
});
