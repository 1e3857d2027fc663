import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PERMISSIONS } from '../src/auth/permissions.ts';
import { findVisitorProfile } from '../src/modules/identify/identify.repository.ts';
import { type TestApp, useTestApp } from './helpers/app.ts';
import { describeEachEventEngine } from './helpers/clickhouse.ts';
import { UNKNOWN_ID, addMember, createAccount, createApiKey, createToken, createWebsite, expectError, newEvent } from './helpers/factories.ts';

const IDENTIFY = '/api/v1/identify';
const PROFILE_ID = /^[0-9a-f]{24}$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const allBut = (permission: string) => PERMISSIONS.filter((p) => p !== permission);
const visitor = () => `visitor-${randomBytes(6).toString('hex')}`;

describeEachEventEngine('POST /api/v1/identify', (engine) => {
  const t: TestApp = useTestApp(engine);

  /** An owner's website whose visitor has a pageview, and a df_ key of the website. */
  async function seeded() {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const key = (await createApiKey(t, owner.token, website.id)).key;
    const visitorId = visitor();
    await t.app.events.write([newEvent(website.id, visitorId)]);
    return { owner, website, key, visitorId };
  }

  const profiles = (websiteId: string) => t.db.selectFrom('visitor_profiles').selectAll().where('website_id', '=', websiteId).execute();

  it('stores the profile with the df_ key, answering {message, profileId} with data as an object', async () => {
    const { website, key, visitorId } = await seeded();
    const body = { datafast_visitor_id: visitorId, user_id: 'user_1', name: 'Ada Lovelace', image: 'https://example.com/ada.png', plan: 'pro', 'signup-source': 'ads' };
    const response = await t.request('POST', IDENTIFY, { token: key, body });
    expect(response.status, response.raw).toBe(200);
    expect(response.body).toEqual({ status: 'success', data: { message: 'Visitor identified', profileId: expect.stringMatching(PROFILE_ID) } });

    expect(await findVisitorProfile(t.db, website.id, visitorId)).toEqual({
      userId: 'user_1',
      name: 'Ada Lovelace',
      image: 'https://example.com/ada.png',
      metadata: { plan: 'pro', 'signup-source': 'ads' },
      identifiedAt: expect.stringMatching(ISO_MS),
    });
    const profile = await findVisitorProfile(t.db, website.id, visitorId);
    expect(Math.abs(Date.parse(profile!.identifiedAt) - Date.now())).toBeLessThan(60_000);
  });

  it('answers the same profileId for every identify of a visitor, and the latest identify replaces the profile', async () => {
    const { website, key, visitorId } = await seeded();
    const first = await t.request('POST', IDENTIFY, { token: key, body: { datafast_visitor_id: visitorId, user_id: 'u1', name: 'Ada', plan: 'pro' } });
    const second = await t.request('POST', IDENTIFY, { token: key, body: { datafast_visitor_id: visitorId, user_id: 'u2' } });
    expect(second.status, second.raw).toBe(200);
    expect(second.body.data.profileId).toBe(first.body.data.profileId);
    expect(await profiles(website.id)).toHaveLength(1);
    expect(await findVisitorProfile(t.db, website.id, visitorId)).toMatchObject({ userId: 'u2', name: null, image: null, metadata: null });

    // Another visitor, or the same visitor id on another website, has another profile id.
    const other = visitor();
    await t.app.events.write([newEvent(website.id, other)]);
    const third = await t.request('POST', IDENTIFY, { token: key, body: { datafast_visitor_id: other, user_id: 'u3' } });
    expect(third.body.data.profileId).not.toBe(first.body.data.profileId);
  });

  it('accepts an account token with identify:write and ?websiteId=, null name and image, and a visitor seen through any event', async () => {
    const { owner, website } = await seeded();
    const visitorId = visitor();
    await t.app.events.write([newEvent(website.id, visitorId, { type: 'custom', name: 'signup', path: null })]);
    const token = await createToken(t, owner, ['identify:write'], [website.id]);
    const response = await t.request('POST', IDENTIFY, {
      token,
      query: { websiteId: website.id },
      body: { datafast_visitor_id: visitorId, user_id: 'u9', name: null, image: null },
    });
    expect(response.status, response.raw).toBe(200);
    expect(await findVisitorProfile(t.db, website.id, visitorId)).toMatchObject({ userId: 'u9', name: null, image: null, metadata: null });
  });

  it("names the website by its trackingId (dfid_...) as well as by its id", async () => {
    const { owner, website, visitorId } = await seeded();
    const response = await t.request('POST', IDENTIFY, {
      token: owner.token,
      query: { websiteId: website.trackingId },
      body: { datafast_visitor_id: visitorId, user_id: 'u1' },
    });
    expect(response.status, response.raw).toBe(200);
    expect((await findVisitorProfile(t.db, website.id, visitorId))!.userId).toBe('u1');
    const stranger = await createAccount(t);
    expectError(await t.request('POST', IDENTIFY, { token: stranger.token, query: { websiteId: website.trackingId }, body: { datafast_visitor_id: visitorId, user_id: 'u2' } }), 404);
  });

  it('lets a member identify, and keeps 20 extra fields of 64-character names and 255-character values', async () => {
    const { website, visitorId } = await seeded();
    const member = await createAccount(t);
    await addMember(t, website.id, member.id, 'member');
    const extras = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`${i}`.padEnd(64, 'k'), 'v'.repeat(255)]));
    const response = await t.request('POST', IDENTIFY, {
      token: member.token,
      query: { websiteId: website.id },
      body: { datafast_visitor_id: visitorId, user_id: 'u'.repeat(255), ...extras },
    });
    expect(response.status, response.raw).toBe(200);
    expect((await findVisitorProfile(t.db, website.id, visitorId))!.metadata).toEqual(extras);
  });

  it('finds no profile for a visitor never identified', async () => {
    const { website, visitorId } = await seeded();
    expect(await findVisitorProfile(t.db, website.id, visitorId)).toBeNull();
    expect(await findVisitorProfile(t.db, UNKNOWN_ID, visitorId)).toBeNull();
  });

  it('answers 401 without a credential or with an unknown one, and stores nothing', async () => {
    const { website, visitorId } = await seeded();
    const body = { datafast_visitor_id: visitorId, user_id: 'u1' };
    const missing = await t.request('POST', IDENTIFY, { query: { websiteId: website.id }, body });
    expectError(missing, 401);
    expect(String(missing.headers['www-authenticate'])).toMatch(/^Bearer/);
    expectError(await t.request('POST', IDENTIFY, { token: 'df_nope', body }), 401);
    expect(await profiles(website.id)).toEqual([]);
  });

  it('answers 403 without identify:write, for a token of another website, a viewer and a df_ key of another website', async () => {
    const { owner, website, visitorId } = await seeded();
    const body = { datafast_visitor_id: visitorId, user_id: 'u1' };
    const query = { websiteId: website.id };
    expectError(await t.request('POST', IDENTIFY, { token: await createToken(t, owner, allBut('identify:write')), query, body }), 403, /identify:write/);
    const other = await createWebsite(t, owner.token);
    expectError(await t.request('POST', IDENTIFY, { token: await createToken(t, owner, ['identify:write'], [other.id]), query, body }), 403, /not allowed/);
    const viewer = await createAccount(t);
    await addMember(t, website.id, viewer.id, 'viewer');
    expectError(await t.request('POST', IDENTIFY, { token: viewer.token, query, body }), 403, /viewer/);
    expectError(await t.request('POST', IDENTIFY, { token: (await createApiKey(t, owner.token, other.id)).key, query, body }), 403, /another website/);
    expect(await profiles(website.id)).toEqual([]);
  });

  it("answers 404 for another account's website and an unknown one, even with a bad body", async () => {
    const { website, visitorId } = await seeded();
    const stranger = await createAccount(t);
    const body = { datafast_visitor_id: visitorId, user_id: 'u1' };
    expectError(await t.request('POST', IDENTIFY, { token: stranger.token, query: { websiteId: website.id }, body }), 404);
    expectError(await t.request('POST', IDENTIFY, { token: stranger.token, query: { websiteId: website.id }, body: { user_id: 7 } }), 404);
    expectError(await t.request('POST', IDENTIFY, { token: stranger.token, query: { websiteId: UNKNOWN_ID }, body }), 404);
    expect(await profiles(website.id)).toEqual([]);
  });

  it('answers 404 for a visitor without an event on the website, even one seen on another website', async () => {
    const { owner, website, key } = await seeded();
    expectError(await t.request('POST', IDENTIFY, { token: key, body: { datafast_visitor_id: visitor(), user_id: 'u1' } }), 404, /no event/);
    const elsewhere = visitor();
    const other = await createWebsite(t, owner.token);
    await t.app.events.write([newEvent(other.id, elsewhere)]);
    expectError(await t.request('POST', IDENTIFY, { token: key, body: { datafast_visitor_id: elsewhere, user_id: 'u1' } }), 404, /no event/);
    expect(await profiles(website.id)).toEqual([]);
  });

  it('answers 400 naming the website id when an account token leaves it out', async () => {
    const { owner, website, visitorId } = await seeded();
    expectError(await t.request('POST', IDENTIFY, { token: owner.token, body: { datafast_visitor_id: visitorId, user_id: 'u1' } }), 400, /query\.websiteId: is required/);
    expect(await profiles(website.id)).toEqual([]);
  });

  const bad: [string, (visitorId: string) => unknown, RegExp][] = [
    ['no visitor id', () => ({ user_id: 'u1' }), /body\.datafast_visitor_id: is required/],
    ['no user_id', (v) => ({ datafast_visitor_id: v }), /body\.user_id: is required/],
    ['an empty user_id', (v) => ({ datafast_visitor_id: v, user_id: '' }), /body\.user_id/],
    ['a user_id that is a number', (v) => ({ datafast_visitor_id: v, user_id: 42 }), /body\.user_id: must be string/],
    ['a user_id of 256 characters', (v) => ({ datafast_visitor_id: v, user_id: 'u'.repeat(256) }), /body\.user_id/],
    ['a name that is a number', (v) => ({ datafast_visitor_id: v, user_id: 'u1', name: 3 }), /body\.name: must be string or null/],
    ['an image of 2049 characters', (v) => ({ datafast_visitor_id: v, user_id: 'u1', image: 'i'.repeat(2049) }), /body\.image/],
    ['an extra field that is a number', (v) => ({ datafast_visitor_id: v, user_id: 'u1', plan: 3 }), /body\.plan: must be string/],
    ['an extra field that is null', (v) => ({ datafast_visitor_id: v, user_id: 'u1', plan: null }), /body\.plan: must be string/],
    ['an extra field that is an object', (v) => ({ datafast_visitor_id: v, user_id: 'u1', plan: { tier: 'pro' } }), /body\.plan: must be string/],
    ['an extra value of 256 characters', (v) => ({ datafast_visitor_id: v, user_id: 'u1', plan: 'p'.repeat(256) }), /body\.plan: must NOT have more than 255/],
    ['an extra field name in camel case', (v) => ({ datafast_visitor_id: v, user_id: 'u1', signupDate: 'x' }), /body\.signupDate: extra profile fields need names/],
    ['an extra field name with a dot', (v) => ({ datafast_visitor_id: v, user_id: 'u1', 'a.b': 'x' }), /extra profile fields need names/],
    [
      '21 extra fields',
      (v) => ({ datafast_visitor_id: v, user_id: 'u1', ...Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'x'])) }),
      /body: holds 21 extra profile fields; at most 20/,
    ],
    ['a body that is a list', (v) => [{ datafast_visitor_id: v, user_id: 'u1' }], /body: must be object/],
  ];
  for (const [label, body, pattern] of bad) {
    it(`answers 400 for ${label}, and stores nothing`, async () => {
      const { website, key, visitorId } = await seeded();
      expectError(await t.request('POST', IDENTIFY, { token: key, body: body(visitorId) }), 400, pattern);
      expect(await profiles(website.id)).toEqual([]);
    });
  }

  it('answers 400 for a bad body without changing an existing profile', async () => {
    const { website, key, visitorId } = await seeded();
    expect((await t.request('POST', IDENTIFY, { token: key, body: { datafast_visitor_id: visitorId, user_id: 'u1', plan: 'pro' } })).status).toBe(200);
    const before = await profiles(website.id);
    expectError(await t.request('POST', IDENTIFY, { token: key, body: { datafast_visitor_id: visitorId, user_id: 'u2', plan: 5 } }), 400, /body\.plan/);
    expect(await profiles(website.id)).toEqual(before);
  });

  describe('the OpenAPI document', () => {
    it('documents the route with its operationId and its two required fields', async () => {
      const doc = (await t.request('GET', '/api/v1/openapi.json')).body;
      const operation = doc.paths[IDENTIFY].post;
      expect(operation.operationId).toBe('recordIdentity');
      expect(operation.requestBody.content['application/json'].schema.required.sort()).toEqual(['datafast_visitor_id', 'user_id']);
    });
  });
});
