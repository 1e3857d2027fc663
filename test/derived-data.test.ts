import { describe, expect, it } from 'vitest';
import { PERMISSIONS } from '../src/auth/permissions.ts';
import { relocateChunk } from '../src/modules/analytics/day-relocation.ts';
import { recordEvents } from '../src/modules/events/record-events.ts';
import { type TestApp, useTestApp } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { holdDerivedDataWorker } from './helpers/derived-data-worker.ts';
import { UNKNOWN_ID, addMember, createAccount, createApiKey, createToken, createWebsite, expectError, newEvent, ownerWithWebsite } from './helpers/factories.ts';

// GET /api/v1/admin/websites/{websiteId}/derived-data: whether the website's day rollups are
// ready, or being moved to a new time zone in the background (day-relocation.ts), and how far.
// The app's derived-data worker is held, so a move stays under way until a test runs it.

const HEADER = 'x-sightline-derived-data';
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const EFFECTS = { alertCooldownSeconds: 60, mailEnabled: false };

const READY = {
  state: 'ready',
  reason: null,
  detail: null,
  fromTimezone: null,
  toTimezone: null,
  nextTimezone: null,
  visitorsDone: 0,
  visitorsTotal: null,
  eventsDone: 0,
  eventsTotal: null,
  progress: null,
  startedAt: null,
  funnelBuilds: [],
};

const derivedUrl = (websiteId: string) => `/api/v1/admin/websites/${websiteId}/derived-data`;

/** Every permission but one, so a refusal can only come from the one left out. */
const allBut = (permission: string) => PERMISSIONS.filter((p) => p !== permission);

describeEachEngine('GET /websites/{websiteId}/derived-data', (engine) => {
  const t: TestApp = useTestApp(engine);

  holdDerivedDataWorker(t);

  const site = () => ownerWithWebsite(t);

  async function derived(token: string, websiteId: string) {
    const response = await t.request('GET', derivedUrl(websiteId), { token });
    expect(response.status, response.raw).toBe(200);
    expect(response.body.status).toBe('success');
    expect(response.body.data).toHaveLength(1);
    return response.body.data[0];
  }

  /** Page views of three visitors, stored as ingestion stores them (derived by the move's first chunk). */
  async function visits(websiteId: string) {
    const events = ['ann', 'bob', 'cyd'].map((visitor) => newEvent(websiteId, visitor, { occurredAt: '2026-03-02T23:30:00.000Z' }));
    await t.db.transaction().execute((trx) => recordEvents(trx, events, EFFECTS));
  }

  const changeZone = (token: string, websiteId: string, timezone: string) =>
    t.request('PUT', `/api/v1/admin/websites/${websiteId}`, { token, body: { timezone } });

  describe('answers', () => {
    it('ready, with nulls and zeros, for a website whose zone never changed', async () => {
      const { owner, website } = await site();
      expect(await derived(owner.token, website.id)).toEqual(READY);
    });

    it('rebuilding with the zones and the progress while a change of zone moves the days, and ready once it ends', async () => {
      const { owner, website } = await site();
      await visits(website.id);
      const before = Date.now();
      const changed = await changeZone(owner.token, website.id, 'Asia/Tokyo');
      expect(changed.status, changed.raw).toBe(200);

      // Recorded, not started: the visitors are not counted yet.
      const recorded = await derived(owner.token, website.id);
      expect(recorded).toEqual({
        state: 'rebuilding',
        reason: 'timezone',
        detail: null,
        eventsDone: 0,
        eventsTotal: null,
        fromTimezone: 'Europe/Paris',
        toTimezone: 'Asia/Tokyo',
        nextTimezone: null,
        visitorsDone: 0,
        visitorsTotal: null,
        progress: null,
        startedAt: expect.stringMatching(ISO_MS),
        funnelBuilds: [],
      });
      expect(Date.parse(recorded.startedAt)).toBeGreaterThanOrEqual(before - 1000);
      expect(Date.parse(recorded.startedAt)).toBeLessThanOrEqual(Date.now());
      // The reads that would use the day rollups say the same.
      const overview = await t.request('GET', '/api/v1/analytics/overview', { token: owner.token, query: { websiteId: website.id } });
      expect(overview.status, overview.raw).toBe(200);
      expect(overview.headers[HEADER]).toBe('rebuilding');

      // One chunk of one visitor: a third of the way.
      await t.db.transaction().execute((trx) => relocateChunk(trx, website.id, 1));
      expect(await derived(owner.token, website.id)).toMatchObject({
        state: 'rebuilding',
        visitorsDone: 1,
        visitorsTotal: 3,
        progress: 1 / 3,
        startedAt: recorded.startedAt,
      });

      // A further change waits for this move, and is said so.
      expect((await changeZone(owner.token, website.id, 'America/New_York')).status).toBe(200);
      expect(await derived(owner.token, website.id)).toMatchObject({
        fromTimezone: 'Europe/Paris',
        toTimezone: 'Asia/Tokyo',
        nextTimezone: 'America/New_York',
        visitorsDone: 1,
        visitorsTotal: 3,
      });

      t.app.derivedDataWorker.start();
      await t.app.derivedDataWorker.settle();
      await t.app.derivedDataWorker.stop();
      expect(await derived(owner.token, website.id)).toEqual(READY);
      const after = await t.request('GET', '/api/v1/analytics/overview', { token: owner.token, query: { websiteId: website.id } });
      expect(after.headers[HEADER]).toBeUndefined();
    });

    it('only for its own website: a move of another website leaves it ready', async () => {
      const { owner, website } = await site();
      const other = await createWebsite(t, owner.token);
      expect((await changeZone(owner.token, other.id, 'Asia/Tokyo')).status).toBe(200);
      expect(await derived(owner.token, website.id)).toEqual(READY);
      expect((await derived(owner.token, other.id)).state).toBe('rebuilding');
    });

    it.each(['member', 'viewer'] as const)('to a %s: every role may read it', async (role) => {
      const { owner, website } = await site();
      const other = await createAccount(t);
      await addMember(t, website.id, other.id, role);
      expect((await changeZone(owner.token, website.id, 'Asia/Tokyo')).status).toBe(200);
      expect(await derived(other.token, website.id)).toEqual(await derived(owner.token, website.id));
    });

    it("to the website's own df_ key, and to a token with only settings:read", async () => {
      const { owner, website } = await site();
      const key = await createApiKey(t, owner.token, website.id);
      expect(await derived(key.key, website.id)).toEqual(READY);
      const narrow = await createToken(t, owner, ['settings:read'], [website.id]);
      expect(await derived(narrow, website.id)).toEqual(READY);
    });
  });

  describe('refuses', () => {
    it('401 without a credential, and with an unknown one', async () => {
      const { website } = await site();
      const none = await t.request('GET', derivedUrl(website.id));
      expectError(none, 401);
      expect(String(none.headers['www-authenticate'])).toMatch(/^Bearer/);
      expectError(await t.request('GET', derivedUrl(website.id), { token: `dft_${'x'.repeat(36)}` }), 401);
    });

    it('403 to a token without settings:read', async () => {
      const { owner, website } = await site();
      const token = await createToken(t, owner, allBut('settings:read'));
      expectError(await t.request('GET', derivedUrl(website.id), { token }), 403, /settings:read/);
    });

    it('403 to a token limited to another website', async () => {
      const { owner, website } = await site();
      const allowed = await createWebsite(t, owner.token);
      const limited = await createToken(t, owner, ['settings:read'], [allowed.id]);
      expect((await t.request('GET', derivedUrl(allowed.id), { token: limited })).status).toBe(200);
      expectError(await t.request('GET', derivedUrl(website.id), { token: limited }), 403, /not allowed/);
    });

    it('403 to a df_ key of another website of the same account', async () => {
      const { owner, website } = await site();
      const mine = await createWebsite(t, owner.token);
      const key = await createApiKey(t, owner.token, mine.id);
      expectError(await t.request('GET', derivedUrl(website.id), { token: key.key }), 403, /another website/);
    });

    it("404 for another account's website, and for a well-formed unknown id", async () => {
      const { website } = await site();
      const stranger = await createAccount(t);
      expectError(await t.request('GET', derivedUrl(website.id), { token: stranger.token }), 404, /not found/i);
      expectError(await t.request('GET', derivedUrl(UNKNOWN_ID), { token: stranger.token }), 404, /not found/i);
    });

    it.each(['not-an-id', 'FFFFFFFFFFFFFFFFFFFFFFFF', 'fffffffffffffffffffffff'])('400 naming websiteId for the malformed id %s', async (badId) => {
      const account = await createAccount(t);
      expectError(await t.request('GET', derivedUrl(badId), { token: account.token }), 400, /path\.websiteId/);
    });

    it('400 for an unknown query parameter', async () => {
      const { owner, website } = await site();
      const response = await t.request('GET', derivedUrl(website.id), { token: owner.token, query: { verbose: '1' } });
      expect(response.status, response.raw).toBe(400);
    });
  });
});
