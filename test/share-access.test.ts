import { describe, expect, it } from 'vitest';
import { type ApiResponse, type TestApp, useTestApp, writeAndDerive } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { createWebsite, expectError, newEvent, ownerWithWebsite } from './helpers/factories.ts';

// The public side of a shared dashboard (issue 37 item 3): /api/v1/share/<slug>/... answers the
// analytics page's reads for the link's website only, with the link (and, for a protected link,
// its unlock cookie) as the one credential; revoking, switching the website's sharing off or
// changing the password ends access from the next request on. The page itself is /share/<slug>.

const PASSWORD = 'a long shared password';
const shareApi = (slug: string) => `/api/v1/share/${slug}`;

interface Shared {
  token: string;
  websiteId: string;
  linkId: string;
  slug: string;
}

/** An owner's website with `visitors` pageviews, sharing on, and one link. */
async function sharedWebsite(t: TestApp, options: { password?: string; visitors?: number; enabled?: boolean } = {}): Promise<Shared> {
  const { owner, website } = await ownerWithWebsite(t);
  const visitors = options.visitors ?? 2;
  await writeAndDerive(
    t,
    Array.from({ length: visitors }, (_, i) => newEvent(website.id, `visitor-${website.id}-${i}`, { path: '/pricing' })),
  );
  const put = await t.request('PUT', `/api/v1/admin/websites/${website.id}`, { token: owner.token, body: { isPublicDashboardEnabled: options.enabled ?? true } });
  expect(put.status, put.raw).toBe(200);
  const created = await t.request('POST', `/api/v1/admin/websites/${website.id}/shared-links`, {
    token: owner.token,
    body: options.password ? { name: 'Investors', password: options.password } : { name: 'Investors' },
  });
  expect(created.status, created.raw).toBe(200);
  return { token: owner.token, websiteId: website.id, linkId: created.body.data[0].id, slug: created.body.data[0].slug };
}

function cookieOf(response: ApiResponse): string {
  const header = response.headers['set-cookie'];
  const line = Array.isArray(header) ? header[0]! : String(header);
  return line.split(';')[0]!;
}

async function unlock(t: TestApp, slug: string, password = PASSWORD) {
  return t.request('POST', `${shareApi(slug)}/unlock`, { body: { password } });
}

describeEachEngine('shared dashboards, public side', (engine) => {
  const t = useTestApp(engine);

  describe('a link without a password', () => {
    it("answers the analytics page's reads for the link's website only, whatever websiteId is sent", async () => {
      const shared = await sharedWebsite(t, { visitors: 3 });
      const other = await sharedWebsite(t, { visitors: 5 });
      const state = await t.request('GET', shareApi(shared.slug));
      expect(state.status, state.raw).toBe(200);
      expect(state.body.data).toEqual([{ linkName: 'Investors', passwordRequired: false, unlocked: true }]);

      const overview = await t.request('GET', `${shareApi(shared.slug)}/analytics/overview`);
      expect(overview.status, overview.raw).toBe(200);
      expect(overview.body.data[0].visitors).toBe(3);
      const pointedElsewhere = await t.request('GET', `${shareApi(shared.slug)}/analytics/overview`, { query: { websiteId: other.websiteId } });
      expect(pointedElsewhere.body.data[0].visitors).toBe(3);

      const pages = await t.request('GET', `${shareApi(shared.slug)}/analytics/pages`);
      expect(pages.status, pages.raw).toBe(200);
      expect(pages.body.data[0]).toMatchObject({ visitors: 3 });
      const series = await t.request('GET', `${shareApi(shared.slug)}/analytics/timeseries`, { query: { fields: 'visitors', interval: 'day' } });
      expect(series.status, series.raw).toBe(200);
      expect(series.body.totals.visitors).toBe(3);
      for (const read of ['metadata', 'realtime']) {
        const answer = await t.request('GET', `${shareApi(shared.slug)}/analytics/${read}`);
        expect(answer.status, `${read}: ${answer.raw}`).toBe(200);
      }
      expect((await t.request('GET', `${shareApi(shared.slug)}/funnels`)).body).toEqual({ status: 'success', data: [] });
      expect((await t.request('GET', `${shareApi(shared.slug)}/goals/customizations`)).status).toBe(200);
      expect(overview.headers['cache-control']).toBe('no-store');
    });

    it('opens no visitor-level data, notes, settings or writes', async () => {
      const shared = await sharedWebsite(t);
      const base = shareApi(shared.slug);
      for (const path of ['/analytics/realtime/map', '/visitors', `/visitors/visitor-${shared.websiteId}-0`, '/notes', '/settings', '/shared-links']) {
        expect((await t.request('GET', base + path)).status, path).toBe(404);
      }
      expect((await t.request('POST', `${base}/funnels`, { body: { name: 'x' } })).status).toBe(404);
      expect((await t.request('DELETE', `${base}/goals/customizations`)).status).toBe(404);
    });

    it('opens no admin route: the link is not a credential there', async () => {
      const shared = await sharedWebsite(t);
      expectError(await t.request('GET', `/api/v1/admin/websites/${shared.websiteId}`, { headers: { authorization: `Bearer ${shared.slug}` } }), 401);
      expectError(await t.request('GET', '/api/v1/analytics/overview', { query: { websiteId: shared.websiteId }, headers: { authorization: `Bearer ${shared.slug}` } }), 401);
    });

    it('keeps the slug out of the log', async () => {
      const shared = await sharedWebsite(t);
      await t.request('GET', `${shareApi(shared.slug)}/analytics/overview`);
      await t.request('GET', `${shareApi(shared.slug)}/nothing-here`);
      expect(t.logLines.join('\n')).not.toContain(shared.slug);
    });
  });

  describe('what ends access', () => {
    it('answers 404 for an unknown or malformed slug, alike', async () => {
      const unknown = await t.request('GET', shareApi(`shr_${'A1'.repeat(16)}`));
      expectError(unknown, 404, /does not exist, was revoked/);
      const malformed = await t.request('GET', `${shareApi('nope')}/analytics/overview`);
      expectError(malformed, 404, /does not exist, was revoked/);
    });

    it('answers 404 while the website does not share its dashboard, and again once it does', async () => {
      const shared = await sharedWebsite(t, { enabled: false });
      expectError(await t.request('GET', `${shareApi(shared.slug)}/analytics/overview`), 404);
      await t.request('PUT', `/api/v1/admin/websites/${shared.websiteId}`, { token: shared.token, body: { isPublicDashboardEnabled: true } });
      expect((await t.request('GET', `${shareApi(shared.slug)}/analytics/overview`)).status).toBe(200);
    });

    it('answers 404 from the request after a revoke', async () => {
      const shared = await sharedWebsite(t);
      expect((await t.request('GET', `${shareApi(shared.slug)}/analytics/overview`)).status).toBe(200);
      await t.request('DELETE', `/api/v1/admin/websites/${shared.websiteId}/shared-links/${shared.linkId}`, { token: shared.token });
      expectError(await t.request('GET', `${shareApi(shared.slug)}/analytics/overview`), 404);
      expectError(await t.request('GET', shareApi(shared.slug)), 404);
    });
  });

  describe('a link with a password', () => {
    it('asks for the password, refuses the reads until it is given, then reads with the cookie', async () => {
      const shared = await sharedWebsite(t, { password: PASSWORD });
      const state = await t.request('GET', shareApi(shared.slug));
      expect(state.body.data).toEqual([{ linkName: 'Investors', passwordRequired: true, unlocked: false }]);
      expectError(await t.request('GET', `${shareApi(shared.slug)}/analytics/overview`), 401, /password/);
      // An account token of the owner is no way around the password.
      expectError(await t.request('GET', `${shareApi(shared.slug)}/analytics/overview`, { token: shared.token }), 401);

      expectError(await unlock(t, shared.slug, 'not the password'), 401, /Wrong password/);
      const unlocked = await unlock(t, shared.slug);
      expect(unlocked.status, unlocked.raw).toBe(200);
      expect(unlocked.body.data).toEqual([{ unlocked: true }]);
      const setCookie = String(unlocked.headers['set-cookie']);
      expect(setCookie).toContain(`Path=${shareApi(shared.slug)}`);
      expect(setCookie).toContain('HttpOnly');
      expect(setCookie).not.toContain(PASSWORD);
      const cookie = cookieOf(unlocked);

      const overview = await t.request('GET', `${shareApi(shared.slug)}/analytics/overview`, { headers: { cookie } });
      expect(overview.status, overview.raw).toBe(200);
      expect(overview.body.data[0].visitors).toBe(2);
      expect((await t.request('GET', shareApi(shared.slug), { headers: { cookie } })).body.data[0].unlocked).toBe(true);
      expect(t.logLines.join('\n')).not.toContain(PASSWORD);
    });

    it("does not open another link with one link's cookie, nor a forged one", async () => {
      const first = await sharedWebsite(t, { password: PASSWORD });
      const second = await sharedWebsite(t, { password: PASSWORD });
      const cookie = cookieOf(await unlock(t, first.slug));
      expectError(await t.request('GET', `${shareApi(second.slug)}/analytics/overview`, { headers: { cookie } }), 401);
      const [name, value] = cookie.split('=') as [string, string];
      const forged = `${name}=${String(Date.now() + 1e9).slice(0, 13)}.${value.split('.')[1]}`;
      expectError(await t.request('GET', `${shareApi(first.slug)}/analytics/overview`, { headers: { cookie: forged } }), 401);
    });

    it('ends an unlock when the password changes, the link is revoked or sharing is switched off', async () => {
      const shared = await sharedWebsite(t, { password: PASSWORD });
      const link = `/api/v1/admin/websites/${shared.websiteId}/shared-links/${shared.linkId}`;
      const read = (cookie: string) => t.request('GET', `${shareApi(shared.slug)}/analytics/overview`, { headers: { cookie } });

      const before = cookieOf(await unlock(t, shared.slug));
      await t.request('PUT', link, { token: shared.token, body: { password: 'the next long password' } });
      expectError(await read(before), 401);

      const after = cookieOf(await unlock(t, shared.slug, 'the next long password'));
      expect((await read(after)).status).toBe(200);
      await t.request('PUT', `/api/v1/admin/websites/${shared.websiteId}`, { token: shared.token, body: { isPublicDashboardEnabled: false } });
      expectError(await read(after), 404);
      await t.request('PUT', `/api/v1/admin/websites/${shared.websiteId}`, { token: shared.token, body: { isPublicDashboardEnabled: true } });
      expect((await read(after)).status).toBe(200);
      await t.request('DELETE', link, { token: shared.token });
      expectError(await read(after), 404);
    });

    it('answers 400 naming the field for a bad unlock body', async () => {
      const shared = await sharedWebsite(t, { password: PASSWORD });
      expectError(await t.request('POST', `${shareApi(shared.slug)}/unlock`, { body: {} }), 400, /password/);
      expectError(await t.request('POST', `${shareApi(shared.slug)}/unlock`, { body: { password: PASSWORD, remember: true } }), 400, /remember/);
      expectError(await t.request('POST', `${shareApi(shared.slug)}/unlock`, { body: { password: 42 } }), 400, /password/);
    });
  });
});

describe('shared dashboards: password guessing', () => {
  const t = useTestApp('sqlite', { signInLimit: { perAccount: 3, perAddress: 100, windowMs: 900_000 } });

  it('answers 429 with Retry-After once a link had its attempts from one address, the right password included', async () => {
    const shared = await sharedWebsite(t, { password: PASSWORD });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await unlock(t, shared.slug, `wrong guess ${i}`)).status);
    expect(statuses).toEqual([401, 401, 401]);
    const refused = await unlock(t, shared.slug);
    expectError(refused, 429, /Too many attempts/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.headers['set-cookie']).toBeUndefined();
    // Another link is counted apart.
    const other = await sharedWebsite(t, { password: PASSWORD });
    expect((await unlock(t, other.slug)).status).toBe(200);
  });
});

describe('the shared dashboard page', () => {
  const t = useTestApp('sqlite');
  const html = { accept: 'text/html' };

  it('refuses framing without embed=true, and allows it with embed=true only', async () => {
    const { owner } = await ownerWithWebsite(t);
    const website = await createWebsite(t, owner.token);
    const created = await t.request('POST', `/api/v1/admin/websites/${website.id}/shared-links`, { token: owner.token, body: { name: 'Wall' } });
    const slug = created.body.data[0].slug as string;

    const page = await t.request('GET', `/share/${slug}`, { headers: html });
    expect(page.status).toBe(200);
    expect(page.raw).toContain('<div id="app">');
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.headers['x-robots-tag']).toContain('noindex');

    const embed = await t.request('GET', `/share/${slug}?embed=true`, { headers: html });
    expect(embed.status).toBe(200);
    expect(embed.headers['x-frame-options']).toBeUndefined();
    expect(embed.headers['content-security-policy']).toContain('frame-ancestors *');
    expect(embed.headers['content-security-policy']).toContain("script-src 'self'");

    // Any other page, with embed=true or not, still refuses framing.
    const other = await t.request('GET', '/websites?embed=true', { headers: html });
    expect(other.headers['x-frame-options']).toBe('DENY');
    expect(other.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  });
});
