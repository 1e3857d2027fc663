import { describe, expect, it } from 'vitest';
import { findVisitorProfile } from '../src/modules/identify/identify.repository.ts';
import { type TestApp, useTestApp } from './helpers/app.ts';
import { describeEachEventEngine } from './helpers/clickhouse.ts';
import { GOOGLEBOT, type Website, pageview, send } from './helpers/browser-events.ts';
import { type TestAccount, createAccount, createApiKey, createWebsite, expectError } from './helpers/factories.ts';

// The `identify` event the datafast SDK posts to /api/events (website-api.md section 7): the same
// profile as POST /api/v1/identify, and no event, so nothing a page view or a session counts.

/** An identify event as the SDK's identify(userId, properties) builds it (name and image "" when not given). */
function identify(website: Website, visitorId: string, sessionId: string, properties: Record<string, unknown>) {
  return pageview(website, { visitorId, sessionId, type: 'identify', referrer: null, extraData: { name: '', image: '', ...properties } });
}

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

describeEachEventEngine('identify events of POST /api/events', (engine) => {
  const t: TestApp = useTestApp(engine);

  /** A website with one visitor who viewed a page. */
  async function visited(settings?: Record<string, unknown>): Promise<{ account: TestAccount; website: Website; view: ReturnType<typeof pageview> }> {
    const account = await createAccount(t);
    const website = await createWebsite(t, account.token);
    if (settings) {
      const updated = await t.request('PUT', `/api/v1/admin/websites/${website.id}`, { token: account.token, body: settings });
      expect(updated.status, updated.raw).toBe(200);
    }
    const view = pageview(website);
    const stored = await send(t, view);
    expect(stored.status, stored.raw).toBe(200);
    return { account, website, view };
  }

  const profiles = (websiteId: string) => t.db.selectFrom('visitor_profiles').selectAll().where('website_id', '=', websiteId).execute();
  const read = (account: TestAccount, website: Website, path: string, query: Record<string, string> = {}) =>
    t.request('GET', path, { token: account.token, query: { websiteId: website.id, ...query } });

  it('creates the profile POST /identify would, stores no event, and adds no pageview or session', async () => {
    const { account, website, view } = await visited();
    const body = identify(website, view.visitorId, view.sessionId, { user_id: 'user_42', name: 'Ada', image: 'https://example.com/ada.png', plan: 'pro' });
    const response = await send(t, body);
    expect(response.status, response.raw).toBe(200);
    expect(response.body).toEqual({ status: 'success', visitorId: view.visitorId, profileId: expect.stringMatching(/^[0-9a-f]{24}$/) });

    const visitor = await read(account, website, `/api/v1/visitors/${view.visitorId}`);
    expect(visitor.status, visitor.raw).toBe(200);
    expect(visitor.body.data.profile).toMatchObject({ userId: 'user_42', name: 'Ada', image: 'https://example.com/ada.png', metadata: { plan: 'pro' } });
    expect((await t.storedEvents(website.id)).map((row) => row.type)).toEqual(['pageview']);
    const overview = await read(account, website, '/api/v1/analytics/overview', { startAt: day(-1), endAt: day(1), timezone: 'UTC' });
    expect(overview.status, overview.raw).toBe(200);
    expect(overview.body.data[0]).toMatchObject({ visitors: 1, sessions: 1, pageviews: 1, bounce_rate: 100 });

    // One code path: the backend's identify answers the same profile id and replaces the profile.
    const key = await createApiKey(t, account.token, website.id);
    const backend = await t.request('POST', '/api/v1/identify', { token: key.key, body: { datafast_visitor_id: view.visitorId, user_id: 'user_43' } });
    expect(backend.status, backend.raw).toBe(200);
    expect(backend.body.data.profileId).toBe(response.body.profileId);
    expect(await findVisitorProfile(t.db, website.id, view.visitorId)).toMatchObject({ userId: 'user_43', name: null, metadata: null });
  });

  it('reads the empty name and image the SDK sends when not given as none, and replaces an earlier profile', async () => {
    const { website, view } = await visited();
    expect((await send(t, identify(website, view.visitorId, view.sessionId, { user_id: 'u1', name: 'Ann', team: 'a' }))).status).toBe(200);
    expect((await send(t, identify(website, view.visitorId, view.sessionId, { user_id: 'u2' }))).status).toBe(200);
    expect(await findVisitorProfile(t.db, website.id, view.visitorId)).toMatchObject({ userId: 'u2', name: null, image: null, metadata: null });
    expect(await profiles(website.id)).toHaveLength(1);
  });

  it("identifies a cookieless website's visitor under the server-derived id", async () => {
    const { account, website } = await visited({ isCookieless: true });
    const [row] = await t.storedEvents(website.id);
    // The SDK sends a fresh random id with every cookieless event.
    const response = await send(t, { ...identify(website, 'random-per-event', 'session-1', { user_id: 'u1' }), cookieless: true });
    expect(response.status, response.raw).toBe(200);
    expect(response.body.visitorId).toBe(row!.visitor_id);
    expect((await read(account, website, `/api/v1/visitors/${row!.visitor_id}`)).body.data.profile).toMatchObject({ userId: 'u1' });
  });

  describe('refused or dropped', () => {
    const bad: [string, Record<string, unknown> | undefined, RegExp][] = [
      ['no extraData', undefined, /^body\.extraData: is required/],
      ['no user_id', { name: 'Ada' }, /^body\.extraData\.user_id: is required/],
      ['an empty user_id', { user_id: '' }, /^body\.extraData\.user_id/],
      ['a user_id that is a number', { user_id: 42 }, /^body\.extraData\.user_id: must be string/],
      ['a name that is a number', { user_id: 'u1', name: 3 }, /^body\.extraData\.name: must be string or null/],
      ['an extra field that is a number', { user_id: 'u1', seats: 3 }, /^body\.extraData\.seats: must be string/],
      ['an extra value of 256 characters', { user_id: 'u1', plan: 'p'.repeat(256) }, /^body\.extraData\.plan: must NOT have more than 255/],
      ['an extra field name in camel case', { user_id: 'u1', signupDate: 'x' }, /^body\.extraData\.signupDate: extra profile fields need names/],
      ['21 extra fields', { user_id: 'u1', ...Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'x'])) }, /^body\.extraData: holds 21 extra profile fields/],
    ];
    for (const [label, extraData, pattern] of bad) {
      it(`answers 400 for ${label}, changing nothing`, async () => {
        const { website, view } = await visited();
        const body = pageview(website, { visitorId: view.visitorId, sessionId: view.sessionId, type: 'identify', extraData });
        expectError(await send(t, body), 400, pattern);
        expect(await profiles(website.id)).toEqual([]);
        expect(await t.storedEvents(website.id)).toHaveLength(1);
      });
    }

    it('answers 404 for a visitor with no event on the website, as POST /identify does', async () => {
      const { website } = await visited();
      expectError(await send(t, identify(website, 'never-seen', 'session-1', { user_id: 'u1' })), 404, /Visitor not found/);
      expect(await profiles(website.id)).toEqual([]);
    });

    it('drops the identify of a visitor the website excludes (a bot here) as it drops its other events', async () => {
      const { website, view } = await visited();
      const response = await send(t, identify(website, view.visitorId, view.sessionId, { user_id: 'u1' }), { userAgent: GOOGLEBOT });
      expect(response.status, response.raw).toBe(200);
      expect(response.body).toEqual({ status: 'success', dropped: 'bot' });
      expect(await profiles(website.id)).toEqual([]);
    });
  });
});
