import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type TestApp, useTestApp } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import {
  UNKNOWN_ID,
  addMember,
  createAccount,
  createApiKey,
  createToken,
  createWebsite,
  expectError,
} from './helpers/factories.ts';

const RAW_KEY = /^df_[0-9A-Za-z]{36}$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const keysUrl = (websiteId: string) => `/api/v1/admin/websites/${websiteId}/apikeys`;
const keyUrl = (websiteId: string, keyId: string) => `${keysUrl(websiteId)}/${keyId}`;
const websiteUrl = (websiteId: string) => `/api/v1/admin/websites/${websiteId}`;

/** The rows of a website's keys as stored, revoked ones included. */
async function storedKeys(t: TestApp, websiteId: string) {
  return t.db.selectFrom('api_keys').selectAll().where('website_id', '=', websiteId).orderBy('created_at').orderBy('id').execute();
}

async function activeKeyCount(t: TestApp, websiteId: string): Promise<number> {
  return (await storedKeys(t, websiteId)).filter((row) => row.revoked_at === null).length;
}

/** An account with one website, the usual starting point. */
async function ownerWithWebsite(t: TestApp) {
  const owner = await createAccount(t);
  const website = await createWebsite(t, owner.token);
  return { owner, website };
}

describeEachEngine('website API keys', (engine) => {
  const t = useTestApp(engine);

  describe('create and list', () => {
    it('returns the raw key once with the item, and the list never shows it', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const created = await t.request('POST', keysUrl(website.id), { token: owner.token, body: { name: 'Server key' } });
      expect(created.status, created.raw).toBe(200);
      expect(created.body.status).toBe('success');
      expect(created.body.data).toHaveLength(1);
      const item = created.body.data[0];
      expect(Object.keys(item).sort()).toEqual(['_id', 'createdAt', 'displayKey', 'id', 'key', 'lastUsedAt', 'name', 'websiteId']);
      expect(item.key).toMatch(RAW_KEY);
      expect(item.id).toMatch(/^[0-9a-f]{24}$/);
      expect(item._id).toBe(item.id);
      expect(item.websiteId).toBe(website.id);
      expect(item.name).toBe('Server key');
      expect(item.displayKey).toBe(`${item.key.slice(0, 7)}...${item.key.slice(-4)}`);
      expect(item.lastUsedAt).toBeNull();
      expect(item.createdAt).toMatch(ISO_MS);
      expect(Date.parse(item.createdAt)).toBeGreaterThan(Date.now() - 60_000);

      const list = await t.request('GET', keysUrl(website.id), { token: owner.token });
      expect(list.status, list.raw).toBe(200);
      const { key, ...withoutKey } = item;
      expect(list.body).toEqual({ status: 'success', data: [withoutKey] });
      expect(list.raw).not.toContain(key);
    });

    it('lists only the keys of the website asked for, oldest first', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const other = await createWebsite(t, owner.token);
      const first = await createApiKey(t, owner.token, website.id, 'first');
      const second = await createApiKey(t, owner.token, website.id, 'second');
      await createApiKey(t, owner.token, other.id, 'elsewhere');
      const list = await t.request('GET', keysUrl(website.id), { token: owner.token });
      expect(list.body.data.map((k: { id: string }) => k.id)).toEqual([first.id, second.id]);
      expect(list.body.data.map((k: { name: string }) => k.name)).toEqual(['first', 'second']);
    });

    it('lists an empty array for a website without keys', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const list = await t.request('GET', keysUrl(website.id), { token: owner.token });
      expect(list.status).toBe(200);
      expect(list.body).toEqual({ status: 'success', data: [] });
    });

    it('authenticates with the new key and then shows lastUsedAt in the list', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const key = await createApiKey(t, owner.token, website.id);
      const before = await t.request('GET', keysUrl(website.id), { token: owner.token });
      expect(before.body.data[0].lastUsedAt).toBeNull();

      const used = await t.request('GET', websiteUrl(website.id), { token: key.key });
      expect(used.status, used.raw).toBe(200);
      expect(used.body.data[0].id).toBe(website.id);

      const after = await t.request('GET', keysUrl(website.id), { token: owner.token });
      expect(after.body.data[0].lastUsedAt).toMatch(ISO_MS);
      expect(Date.parse(after.body.data[0].lastUsedAt)).toBeGreaterThan(Date.now() - 60_000);
    });

    it('accepts a name of exactly 100 characters', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const name = 'n'.repeat(100);
      const created = await t.request('POST', keysUrl(website.id), { token: owner.token, body: { name } });
      expect(created.status, created.raw).toBe(200);
      expect(created.body.data[0].name).toBe(name);
    });
  });

  describe('roll', () => {
    const variants: { label: string; options: { body?: unknown; payload?: string; headers?: Record<string, string> } }[] = [
      { label: 'without a body', options: {} },
      { label: 'with {}', options: { body: {} } },
      { label: 'with a JSON content type and an empty body', options: { payload: '', headers: { 'content-type': 'application/json' } } },
    ];

    for (const { label, options } of variants) {
      it(`keeps id and name, returns a new key once and kills the old one at once (${label})`, async () => {
        const { owner, website } = await ownerWithWebsite(t);
        const original = await createApiKey(t, owner.token, website.id, 'CI key');
        expect((await t.request('GET', websiteUrl(website.id), { token: original.key })).status).toBe(200);

        const rolled = await t.request('PUT', keyUrl(website.id, original.id), { token: owner.token, ...options });
        expect(rolled.status, rolled.raw).toBe(200);
        const item = rolled.body.data[0];
        expect(item).toMatchObject({ id: original.id, _id: original.id, websiteId: website.id, name: 'CI key' });
        expect(item.key).toMatch(RAW_KEY);
        expect(item.key).not.toBe(original.key);
        expect(item.displayKey).toBe(`${item.key.slice(0, 7)}...${item.key.slice(-4)}`);
        expect(item.displayKey).not.toBe(original.displayKey);

        expectError(await t.request('GET', websiteUrl(website.id), { token: original.key }), 401, /unknown or has been revoked/);
        expect((await t.request('GET', websiteUrl(website.id), { token: item.key })).status).toBe(200);

        const list = await t.request('GET', keysUrl(website.id), { token: owner.token });
        expect(list.body.data).toHaveLength(1);
        expect(list.body.data[0]).toMatchObject({ id: original.id, name: 'CI key', displayKey: item.displayKey });
        expect(list.body.data[0].key).toBeUndefined();
        expect(list.raw).not.toContain(item.key);
      });
    }

    it('answers 400 for an unknown field in the body and keeps the old secret', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const key = await createApiKey(t, owner.token, website.id);
      const [before] = await storedKeys(t, website.id);
      expectError(
        await t.request('PUT', keyUrl(website.id, key.id), { token: owner.token, body: { name: 'renamed' } }),
        400,
        /body\.name: is not an allowed field/,
      );
      expect(await storedKeys(t, website.id)).toEqual([before]);
      expect((await t.request('GET', websiteUrl(website.id), { token: key.key })).status).toBe(200);
    });

    it('answers 400 for a body that is not an object', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const key = await createApiKey(t, owner.token, website.id);
      expectError(await t.request('PUT', keyUrl(website.id, key.id), { token: owner.token, body: ['x'] }), 400, /body/);
      expect((await t.request('GET', websiteUrl(website.id), { token: key.key })).status).toBe(200);
    });

    it('answers 404 for a revoked key', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const key = await createApiKey(t, owner.token, website.id);
      expect((await t.request('DELETE', keyUrl(website.id, key.id), { token: owner.token })).status).toBe(200);
      expectError(await t.request('PUT', keyUrl(website.id, key.id), { token: owner.token }), 404, /API key not found/);
      const [row] = await storedKeys(t, website.id);
      expect(row!.display_key).toBe(key.displayKey);
    });
  });

  describe('delete', () => {
    it('answers [{deleted: true}], the key stops working, and a second delete is 404', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const keep = await createApiKey(t, owner.token, website.id, 'keep');
      const drop = await createApiKey(t, owner.token, website.id, 'drop');
      expect((await t.request('GET', websiteUrl(website.id), { token: drop.key })).status).toBe(200);

      const deleted = await t.request('DELETE', keyUrl(website.id, drop.id), { token: owner.token });
      expect(deleted.status, deleted.raw).toBe(200);
      expect(deleted.body).toEqual({ status: 'success', data: [{ deleted: true }] });

      expectError(await t.request('GET', websiteUrl(website.id), { token: drop.key }), 401, /unknown or has been revoked/);
      expect((await t.request('GET', websiteUrl(website.id), { token: keep.key })).status).toBe(200);
      const list = await t.request('GET', keysUrl(website.id), { token: owner.token });
      expect(list.body.data.map((k: { id: string }) => k.id)).toEqual([keep.id]);

      expectError(await t.request('DELETE', keyUrl(website.id, drop.id), { token: owner.token }), 404, /API key not found/);
    });

    it('accepts a JSON content type with an empty body', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const key = await createApiKey(t, owner.token, website.id);
      const deleted = await t.request('DELETE', keyUrl(website.id, key.id), {
        token: owner.token,
        payload: '',
        headers: { 'content-type': 'application/json' },
      });
      expect(deleted.status, deleted.raw).toBe(200);
      expect(await activeKeyCount(t, website.id)).toBe(0);
    });
  });

  describe('the key limit', () => {
    it('refuses the 11th active key with a message naming the limit and creates nothing', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const keys = [];
      for (let i = 1; i <= 10; i++) keys.push(await createApiKey(t, owner.token, website.id, `key ${i}`));
      const refused = await t.request('POST', keysUrl(website.id), { token: owner.token, body: { name: 'key 11' } });
      expectError(refused, 400, /limit reached.*at most 10 keys/);
      expect(await activeKeyCount(t, website.id)).toBe(10);
      expect((await storedKeys(t, website.id)).map((row) => row.name)).not.toContain('key 11');

      // Revoked keys do not count.
      expect((await t.request('DELETE', keyUrl(website.id, keys[0]!.id), { token: owner.token })).status).toBe(200);
      const again = await t.request('POST', keysUrl(website.id), { token: owner.token, body: { name: 'key 11' } });
      expect(again.status, again.raw).toBe(200);
      expect(await activeKeyCount(t, website.id)).toBe(10);
    });

    it('counts per website', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const other = await createWebsite(t, owner.token);
      for (let i = 1; i <= 10; i++) await createApiKey(t, owner.token, website.id, `key ${i}`);
      const elsewhere = await t.request('POST', keysUrl(other.id), { token: owner.token, body: { name: 'fine' } });
      expect(elsewhere.status, elsewhere.raw).toBe(200);
    });

    it('holds under concurrent creation', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      for (let i = 1; i <= 8; i++) await createApiKey(t, owner.token, website.id, `key ${i}`);
      const responses = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          t.request('POST', keysUrl(website.id), { token: owner.token, body: { name: `racer ${i}` } }),
        ),
      );
      const statuses = responses.map((r) => r.status).sort();
      expect(statuses).toEqual([200, 200, 400, 400, 400, 400]);
      expect(await activeKeyCount(t, website.id)).toBe(10);
    });
  });

  describe('bad input', () => {
    const cases: { label: string; body?: unknown; pattern: RegExp }[] = [
      { label: 'name missing', body: {}, pattern: /body\.name: is required/ },
      { label: 'no body at all', body: undefined, pattern: /body\.name: is required/ },
      { label: 'name empty', body: { name: '' }, pattern: /body\.name: must NOT have fewer than 1 characters/ },
      { label: 'name over 100 characters', body: { name: 'n'.repeat(101) }, pattern: /body\.name: must NOT have more than 100 characters/ },
      { label: 'name a number', body: { name: 42 }, pattern: /body\.name: must be string/ },
      { label: 'name null', body: { name: null }, pattern: /body\.name: must be string/ },
      { label: 'an unknown field', body: { name: 'ok', websiteId: UNKNOWN_ID }, pattern: /body\.websiteId: is not an allowed field/ },
    ];

    for (const { label, body, pattern } of cases) {
      it(`answers 400 naming the field for ${label} and creates nothing`, async () => {
        const { owner, website } = await ownerWithWebsite(t);
        expectError(await t.request('POST', keysUrl(website.id), { token: owner.token, body }), 400, pattern);
        expect(await storedKeys(t, website.id)).toEqual([]);
      });
    }

    it('answers 400 for malformed JSON and 415 for another content type', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      expectError(
        await t.request('POST', keysUrl(website.id), { token: owner.token, payload: '{"name":', headers: { 'content-type': 'application/json' } }),
        400,
        /not valid JSON/,
      );
      expectError(
        await t.request('POST', keysUrl(website.id), { token: owner.token, payload: 'name=x', headers: { 'content-type': 'text/plain' } }),
        415,
      );
      expect(await storedKeys(t, website.id)).toEqual([]);
    });

    it('answers 400 for a malformed apiKeyId on roll and delete', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const key = await createApiKey(t, owner.token, website.id);
      for (const method of ['PUT', 'DELETE']) {
        expectError(await t.request(method, keyUrl(website.id, 'not-an-id'), { token: owner.token }), 400, /apiKeyId/);
        expectError(await t.request(method, keyUrl(website.id, key.id.toUpperCase()), { token: owner.token }), 400, /apiKeyId/);
      }
      expect((await t.request('GET', websiteUrl(website.id), { token: key.key })).status).toBe(200);
    });

    it('answers 400 for a malformed websiteId', async () => {
      const { owner } = await ownerWithWebsite(t);
      expectError(await t.request('GET', keysUrl('12345'), { token: owner.token }), 400, /websiteId/);
    });
  });

  describe('unknown and foreign ids', () => {
    it("answers 404 on every route for another account's website and changes nothing", async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const stranger = await createAccount(t);
      const key = await createApiKey(t, owner.token, website.id);
      const before = await storedKeys(t, website.id);
      expectError(await t.request('GET', keysUrl(website.id), { token: stranger.token }), 404, /Website not found/);
      expectError(await t.request('POST', keysUrl(website.id), { token: stranger.token, body: { name: 'x' } }), 404, /Website not found/);
      expectError(await t.request('PUT', keyUrl(website.id, key.id), { token: stranger.token }), 404, /Website not found/);
      expectError(await t.request('DELETE', keyUrl(website.id, key.id), { token: stranger.token }), 404, /Website not found/);
      expect(await storedKeys(t, website.id)).toEqual(before);
    });

    it('answers 404 for an unknown website id', async () => {
      const { owner } = await ownerWithWebsite(t);
      expectError(await t.request('GET', keysUrl(UNKNOWN_ID), { token: owner.token }), 404, /Website not found/);
    });

    it('answers 404 on roll and delete for a key of another website of the same account', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const other = await createWebsite(t, owner.token);
      const foreign = await createApiKey(t, owner.token, other.id);
      const before = await storedKeys(t, other.id);
      expectError(await t.request('PUT', keyUrl(website.id, foreign.id), { token: owner.token }), 404, /API key not found/);
      expectError(await t.request('DELETE', keyUrl(website.id, foreign.id), { token: owner.token }), 404, /API key not found/);
      expect(await storedKeys(t, other.id)).toEqual(before);
      expect((await t.request('GET', websiteUrl(other.id), { token: foreign.key })).status).toBe(200);
    });

    it("answers 404 on roll and delete for a key of another account's website", async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const stranger = await ownerWithWebsite(t);
      const foreign = await createApiKey(t, stranger.owner.token, stranger.website.id);
      expectError(await t.request('PUT', keyUrl(website.id, foreign.id), { token: owner.token }), 404, /API key not found/);
      expectError(await t.request('DELETE', keyUrl(website.id, foreign.id), { token: owner.token }), 404, /API key not found/);
      expect((await t.request('GET', websiteUrl(stranger.website.id), { token: foreign.key })).status).toBe(200);
    });

    it('answers 404 on roll and delete for an unknown key id', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      expectError(await t.request('PUT', keyUrl(website.id, UNKNOWN_ID), { token: owner.token }), 404, /API key not found/);
      expectError(await t.request('DELETE', keyUrl(website.id, UNKNOWN_ID), { token: owner.token }), 404, /API key not found/);
    });
  });

  describe('who may manage keys', () => {
    it('answers 401 with WWW-Authenticate without a token on every route', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const key = await createApiKey(t, owner.token, website.id);
      const calls: [string, string, unknown][] = [
        ['GET', keysUrl(website.id), undefined],
        ['POST', keysUrl(website.id), { name: 'x' }],
        ['PUT', keyUrl(website.id, key.id), undefined],
        ['DELETE', keyUrl(website.id, key.id), undefined],
      ];
      for (const [method, url, body] of calls) {
        const response = await t.request(method, url, { body });
        expectError(response, 401, /missing/);
        expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
      }
      expect(await activeKeyCount(t, website.id)).toBe(1);
      expect((await t.request('GET', websiteUrl(website.id), { token: key.key })).status).toBe(200);
    });

    it('needs api-keys:read to list and api-keys:write to create, roll and delete', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const key = await createApiKey(t, owner.token, website.id);
      const readOnly = await createToken(t, owner, ['api-keys:read']);
      const writeOnly = await createToken(t, owner, ['api-keys:write']);
      const unrelated = await createToken(t, owner, ['settings:read', 'settings:write']);
      const before = await storedKeys(t, website.id);

      expect((await t.request('GET', keysUrl(website.id), { token: readOnly })).status).toBe(200);
      expectError(await t.request('GET', keysUrl(website.id), { token: writeOnly }), 403, /lacks the permission api-keys:read/);
      expectError(await t.request('GET', keysUrl(website.id), { token: unrelated }), 403, /api-keys:read/);
      for (const token of [readOnly, unrelated]) {
        expectError(await t.request('POST', keysUrl(website.id), { token, body: { name: 'x' } }), 403, /lacks the permission api-keys:write/);
        expectError(await t.request('PUT', keyUrl(website.id, key.id), { token }), 403, /api-keys:write/);
        expectError(await t.request('DELETE', keyUrl(website.id, key.id), { token }), 403, /api-keys:write/);
      }
      expect(await storedKeys(t, website.id)).toEqual(before);

      const created = await t.request('POST', keysUrl(website.id), { token: writeOnly, body: { name: 'by writer' } });
      expect(created.status, created.raw).toBe(200);
      expect((await t.request('PUT', keyUrl(website.id, key.id), { token: writeOnly })).status).toBe(200);
      expect((await t.request('DELETE', keyUrl(website.id, key.id), { token: writeOnly })).status).toBe(200);
    });

    it('lets a viewer list but not create, roll or delete', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const viewer = await createAccount(t);
      await addMember(t, website.id, viewer.id, 'viewer');
      const key = await createApiKey(t, owner.token, website.id);
      const before = await storedKeys(t, website.id);

      const list = await t.request('GET', keysUrl(website.id), { token: viewer.token });
      expect(list.status, list.raw).toBe(200);
      expect(list.body.data.map((k: { id: string }) => k.id)).toEqual([key.id]);
      expectError(await t.request('POST', keysUrl(website.id), { token: viewer.token, body: { name: 'x' } }), 403, /role \(viewer\)/);
      expectError(await t.request('PUT', keyUrl(website.id, key.id), { token: viewer.token }), 403, /role \(viewer\)/);
      expectError(await t.request('DELETE', keyUrl(website.id, key.id), { token: viewer.token }), 403, /role \(viewer\)/);
      expect(await storedKeys(t, website.id)).toEqual(before);
      expect((await t.request('GET', websiteUrl(website.id), { token: key.key })).status).toBe(200);
    });

    it('lets a member create, list, roll and delete', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const member = await createAccount(t);
      await addMember(t, website.id, member.id, 'member');
      const created = await createApiKey(t, member.token, website.id, 'member key');
      const list = await t.request('GET', keysUrl(website.id), { token: member.token });
      expect(list.body.data.map((k: { id: string }) => k.id)).toEqual([created.id]);
      const rolled = await t.request('PUT', keyUrl(website.id, created.id), { token: member.token });
      expect(rolled.status, rolled.raw).toBe(200);
      expect((await t.request('GET', websiteUrl(website.id), { token: rolled.body.data[0].key })).status).toBe(200);
      const deleted = await t.request('DELETE', keyUrl(website.id, created.id), { token: member.token });
      expect(deleted.body).toEqual({ status: 'success', data: [{ deleted: true }] });
      expect(await activeKeyCount(t, website.id)).toBe(0);
      // The owner sees the same (now empty) list.
      expect((await t.request('GET', keysUrl(website.id), { token: owner.token })).body.data).toEqual([]);
    });

    it('answers 403 for a token limited to other websites', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const other = await createWebsite(t, owner.token);
      const key = await createApiKey(t, owner.token, website.id);
      const limited = await createToken(t, owner, ['*'], [other.id]);
      const before = await storedKeys(t, website.id);
      expectError(await t.request('GET', keysUrl(website.id), { token: limited }), 403, /not allowed to access this website/);
      expectError(await t.request('POST', keysUrl(website.id), { token: limited, body: { name: 'x' } }), 403, /not allowed/);
      expectError(await t.request('PUT', keyUrl(website.id, key.id), { token: limited }), 403, /not allowed/);
      expectError(await t.request('DELETE', keyUrl(website.id, key.id), { token: limited }), 403, /not allowed/);
      expect(await storedKeys(t, website.id)).toEqual(before);
      expect((await t.request('GET', keysUrl(other.id), { token: limited })).status).toBe(200);
    });

    it('lets a df_ key manage the keys of its own website', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const admin = await createApiKey(t, owner.token, website.id, 'admin key');
      const list = await t.request('GET', keysUrl(website.id), { token: admin.key });
      expect(list.status, list.raw).toBe(200);
      expect(list.body.data.map((k: { id: string }) => k.id)).toEqual([admin.id]);

      const created = await t.request('POST', keysUrl(website.id), { token: admin.key, body: { name: 'made by a key' } });
      expect(created.status, created.raw).toBe(200);
      const child = created.body.data[0];
      expect(child).toMatchObject({ websiteId: website.id, name: 'made by a key' });
      const rolled = await t.request('PUT', keyUrl(website.id, child.id), { token: admin.key });
      expect(rolled.status, rolled.raw).toBe(200);
      expectError(await t.request('GET', websiteUrl(website.id), { token: child.key }), 401);
      const deleted = await t.request('DELETE', keyUrl(website.id, child.id), { token: admin.key });
      expect(deleted.body).toEqual({ status: 'success', data: [{ deleted: true }] });
      expect((await storedKeys(t, website.id)).filter((row) => row.revoked_at === null).map((row) => row.id)).toEqual([admin.id]);
    });

    it('answers 403 to a df_ key on another website of the same account', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const other = await createWebsite(t, owner.token);
      const key = await createApiKey(t, owner.token, website.id);
      const otherKey = await createApiKey(t, owner.token, other.id);
      const before = await storedKeys(t, other.id);
      expectError(await t.request('GET', keysUrl(other.id), { token: key.key }), 403, /another website/);
      expectError(await t.request('POST', keysUrl(other.id), { token: key.key, body: { name: 'x' } }), 403, /another website/);
      expectError(await t.request('PUT', keyUrl(other.id, otherKey.id), { token: key.key }), 403, /another website/);
      expectError(await t.request('DELETE', keyUrl(other.id, otherKey.id), { token: key.key }), 403, /another website/);
      expect(await storedKeys(t, other.id)).toEqual(before);
    });
  });

  describe('secrets', () => {
    it('stores only the SHA-256 hex digest of each raw key', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const key = await createApiKey(t, owner.token, website.id);
      const sha256 = (raw: string) => createHash('sha256').update(raw).digest('hex');
      let [row] = await storedKeys(t, website.id);
      expect(row!.digest).toBe(sha256(key.key));
      expect(row!.digest).toMatch(/^[0-9a-f]{64}$/);
      expect(row!.display_key).toBe(key.displayKey);
      expect(Object.values(row!)).not.toContain(key.key);

      const rolled = (await t.request('PUT', keyUrl(website.id, key.id), { token: owner.token })).body.data[0];
      [row] = await storedKeys(t, website.id);
      expect(row!.digest).toBe(sha256(rolled.key));
      expect(Object.values(row!)).not.toContain(rolled.key);
    });

    it('never writes a raw key to the log', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const linesBefore = t.logLines.length;
      const key = await createApiKey(t, owner.token, website.id);
      const rolled = (await t.request('PUT', keyUrl(website.id, key.id), { token: owner.token })).body.data[0];
      await t.request('GET', websiteUrl(website.id), { token: key.key }); // refused: the old secret
      await t.request('GET', keysUrl(website.id), { token: rolled.key });
      await t.request('POST', keysUrl(website.id), { token: rolled.key, body: { name: rolled.key } }); // a secret in a body
      await t.request('POST', keysUrl(website.id), { token: rolled.key, body: { [rolled.key]: 1 } }); // refused: unknown field
      await t.request('DELETE', keyUrl(website.id, key.id), { token: rolled.key });
      await t.request('GET', keysUrl(website.id), { token: rolled.key }); // refused: revoked
      const log = t.logLines.slice(linesBefore).join('\n');
      expect(log.length).toBeGreaterThan(0);
      expect(log).toContain('request refused');
      for (const secret of [owner.token, key.key, rolled.key]) expect(log).not.toContain(secret);
    });

    it('does not echo a raw key pasted as a field name, in the answer or the log', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const key = await createApiKey(t, owner.token, website.id);
      const linesBefore = t.logLines.length;
      const response = await t.request('PUT', keyUrl(website.id, key.id), { token: owner.token, body: { [key.key]: true } });
      expectError(response, 400, /is not an allowed field/);
      expect(response.raw).not.toContain(key.key);
      expect(t.logLines.slice(linesBefore).join('\n')).not.toContain(key.key);
    });
  });
});
