import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import type { Db } from '../src/db/database.ts';
import { WriteWatch } from '../src/db/write-watch.ts';
import database from '../src/plugins/database.ts';
import routeGuard from '../src/plugins/route-guard.ts';
import { type TestApp, useTestApp } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import {
  type TestAccount,
  addMember,
  createAccount,
  createApiKey,
  createToken,
  createWebsite,
  expectError,
} from './helpers/factories.ts';

const ADMIN = '/api/v1/admin';
const websiteUrl = (websiteId: string) => `${ADMIN}/websites/${websiteId}`;
const keysUrl = (websiteId: string) => `${websiteUrl(websiteId)}/apikeys`;

type Caller = 'owner' | 'member' | 'viewer' | 'df_ key';

/** What the database looks like for the parts the matrix routes can change. */
async function snapshot(t: TestApp, websiteId: string) {
  const website = await t.db.selectFrom('websites').selectAll().where('id', '=', websiteId).executeTakeFirstOrThrow();
  const keys = await t.db.selectFrom('api_keys').select(['id', 'name', 'digest', 'revoked_at']).where('website_id', '=', websiteId).execute();
  return { website, keys };
}

/** A website owned by a fresh account, and the credential of the caller under test. */
async function callerOn(t: TestApp, caller: Caller) {
  const owner = await createAccount(t);
  const website = await createWebsite(t, owner.token);
  if (caller === 'owner') return { website, token: owner.token };
  if (caller === 'df_ key') return { website, token: (await createApiKey(t, owner.token, website.id, 'caller key')).key };
  const account = await createAccount(t);
  await addMember(t, website.id, account.id, caller);
  return { website, token: account.token };
}

interface MatrixRoute {
  label: string;
  method: string;
  url: (websiteId: string) => string;
  body?: unknown;
  /** The contract section 3 answer per caller: true means allowed (200), false means 403. */
  allowed: Record<Caller, boolean>;
  /** The message of the refusal. */
  refusal: (caller: Caller) => RegExp;
}

const roleRefusal = (caller: Caller) => new RegExp(`role \\(${caller}\\) cannot change this website`);

// Contract section 3: read anything = every role; update settings and manage API keys = owner
// and member; a df_ key acts with member rights; deleting a website is refused to everyone.
const MATRIX: MatrixRoute[] = [
  {
    label: 'GET /websites/{id}',
    method: 'GET',
    url: websiteUrl,
    allowed: { owner: true, member: true, viewer: true, 'df_ key': true },
    refusal: roleRefusal,
  },
  {
    label: 'PUT /websites/{id}',
    method: 'PUT',
    url: websiteUrl,
    body: { name: 'Renamed by the matrix' },
    allowed: { owner: true, member: true, viewer: false, 'df_ key': true },
    refusal: roleRefusal,
  },
  {
    label: 'GET /websites/{id}/apikeys',
    method: 'GET',
    url: keysUrl,
    allowed: { owner: true, member: true, viewer: true, 'df_ key': true },
    refusal: roleRefusal,
  },
  {
    label: 'POST /websites/{id}/apikeys',
    method: 'POST',
    url: keysUrl,
    body: { name: 'made by the matrix' },
    allowed: { owner: true, member: true, viewer: false, 'df_ key': true },
    refusal: roleRefusal,
  },
  {
    label: 'DELETE /websites/{id}',
    method: 'DELETE',
    url: websiteUrl,
    allowed: { owner: false, member: false, viewer: false, 'df_ key': false },
    refusal: (caller) => (caller === 'df_ key' ? /API key \(df_\) cannot call this route/ : /only be deleted in the dashboard/),
  },
];

const CALLERS: Caller[] = ['owner', 'member', 'viewer', 'df_ key'];

describeEachEngine('authorization', (engine) => {
  const t = useTestApp(engine);

  describe('the role matrix on website-scoped routes', () => {
    for (const route of MATRIX) {
      for (const caller of CALLERS) {
        const verdict = route.allowed[caller] ? 'allows' : 'refuses with 403';
        it(`${route.label} ${verdict} the ${caller}`, async () => {
          const { website, token } = await callerOn(t, caller);
          const before = await snapshot(t, website.id);
          const response = await t.request(route.method, route.url(website.id), { token, body: route.body });
          if (!route.allowed[caller]) {
            expectError(response, 403, route.refusal(caller));
            expect(await snapshot(t, website.id)).toEqual(before);
            return;
          }
          expect(response.status, response.raw).toBe(200);
          expect(response.body.status).toBe('success');
          const after = await snapshot(t, website.id);
          if (route.method === 'GET') {
            expect(after).toEqual(before);
          } else if (route.label.startsWith('PUT /websites')) {
            expect(response.body.data[0].name).toBe('Renamed by the matrix');
            expect(after.website.name).toBe('Renamed by the matrix');
          } else {
            expect(after.keys.map((k) => k.name)).toEqual([...before.keys.map((k) => k.name), 'made by the matrix']);
          }
        });
      }
    }

    it('reports the caller role on the website', async () => {
      for (const caller of ['owner', 'member', 'viewer'] as const) {
        const { website, token } = await callerOn(t, caller);
        const response = await t.request('GET', websiteUrl(website.id), { token });
        expect(response.body.data[0].role).toBe(caller);
      }
    });

    it('answers 404, not 403, to an account without any role on the website', async () => {
      const { website } = await callerOn(t, 'owner');
      const stranger = await createAccount(t);
      const before = await snapshot(t, website.id);
      for (const route of MATRIX) {
        expectError(await t.request(route.method, route.url(website.id), { token: stranger.token, body: route.body }), 404, /Website not found/);
      }
      expect(await snapshot(t, website.id)).toEqual(before);
    });
  });

  describe('role changes take effect on the very next request', () => {
    /** A member with two tokens: a full one and a narrow one limited to the website. */
    async function memberWithTokens(role: 'member' | 'viewer') {
      const owner = await createAccount(t);
      const website = await createWebsite(t, owner.token);
      const member: TestAccount = await createAccount(t);
      await addMember(t, website.id, member.id, role);
      const narrow = await createToken(t, member, ['settings:read', 'settings:write', 'websites:read'], [website.id]);
      return { website, member, tokens: [member.token, narrow] };
    }

    const setRole = (websiteId: string, accountId: string, role: 'member' | 'viewer') =>
      t.db.updateTable('website_members').set({ role }).where('website_id', '=', websiteId).where('account_id', '=', accountId).execute();

    it('a removed member gets 404 on every token at once', async () => {
      const { website, member, tokens } = await memberWithTokens('member');
      for (const token of tokens) {
        expect((await t.request('GET', websiteUrl(website.id), { token })).status).toBe(200);
        expect((await t.request('PUT', websiteUrl(website.id), { token, body: { name: 'still here' } })).status).toBe(200);
      }
      await t.db.deleteFrom('website_members').where('website_id', '=', website.id).where('account_id', '=', member.id).execute();
      const before = await snapshot(t, website.id);
      for (const token of tokens) {
        expectError(await t.request('GET', websiteUrl(website.id), { token }), 404, /Website not found/);
        expectError(await t.request('PUT', websiteUrl(website.id), { token, body: { name: 'gone' } }), 404, /Website not found/);
        const list = await t.request('GET', `${ADMIN}/websites`, { token });
        expect(list.status, list.raw).toBe(200);
        expect(list.body.data.map((w: { id: string }) => w.id)).not.toContain(website.id);
      }
      expectError(await t.request('GET', keysUrl(website.id), { token: member.token }), 404);
      expectError(await t.request('POST', keysUrl(website.id), { token: member.token, body: { name: 'x' } }), 404);
      expect(await snapshot(t, website.id)).toEqual(before);
    });

    it('a member lowered to viewer loses write access on every token at once, and regains it when raised again', async () => {
      const { website, member, tokens } = await memberWithTokens('member');
      for (const token of tokens) {
        expect((await t.request('PUT', websiteUrl(website.id), { token, body: { name: 'as member' } })).status).toBe(200);
      }
      await setRole(website.id, member.id, 'viewer');
      const before = await snapshot(t, website.id);
      for (const token of tokens) {
        expectError(await t.request('PUT', websiteUrl(website.id), { token, body: { name: 'as viewer' } }), 403, /role \(viewer\)/);
        const read = await t.request('GET', websiteUrl(website.id), { token });
        expect(read.status, read.raw).toBe(200);
        expect(read.body.data[0].role).toBe('viewer');
      }
      expectError(await t.request('POST', keysUrl(website.id), { token: member.token, body: { name: 'x' } }), 403, /role \(viewer\)/);
      expect(await snapshot(t, website.id)).toEqual(before);

      await setRole(website.id, member.id, 'member');
      for (const token of tokens) {
        const response = await t.request('PUT', websiteUrl(website.id), { token, body: { name: 'member again' } });
        expect(response.status, response.raw).toBe(200);
        expect(response.body.data[0].role).toBe('member');
      }
      expect((await t.request('POST', keysUrl(website.id), { token: member.token, body: { name: 'x' } })).status).toBe(200);
    });

    it('a viewer raised to member may write at once', async () => {
      const { website, member, tokens } = await memberWithTokens('viewer');
      for (const token of tokens) {
        expectError(await t.request('PUT', websiteUrl(website.id), { token, body: { name: 'no' } }), 403, /role \(viewer\)/);
      }
      await setRole(website.id, member.id, 'member');
      for (const token of tokens) {
        expect((await t.request('PUT', websiteUrl(website.id), { token, body: { name: 'yes' } })).status).toBe(200);
      }
      expect((await snapshot(t, website.id)).website.name).toBe('yes');
    });
  });

  describe('a df_ key on account-level routes', () => {
    async function keyOfWebsite() {
      const owner = await createAccount(t, 'Key Owner');
      const website = await createWebsite(t, owner.token);
      const key = await createApiKey(t, owner.token, website.id);
      return { owner, website, key: key.key };
    }

    async function accountState(accountId: string) {
      const account = await t.db.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirstOrThrow();
      const tokens = await t.db.selectFrom('access_tokens').select(['id', 'revoked_at']).where('account_id', '=', accountId).execute();
      const websites = await t.db.selectFrom('website_members').select(['website_id', 'role']).where('account_id', '=', accountId).execute();
      return { account, tokens, websites };
    }

    it('answers 403 on every account-level route and changes nothing', async () => {
      const { owner, key } = await keyOfWebsite();
      const [ownerToken] = await t.db.selectFrom('access_tokens').select('id').where('account_id', '=', owner.id).execute();
      const before = await accountState(owner.id);
      const calls: [string, string, unknown][] = [
        ['GET', `${ADMIN}/websites`, undefined],
        ['POST', `${ADMIN}/websites`, { domain: 'made-by-a-key.example.com', timezone: 'UTC' }],
        ['GET', `${ADMIN}/access-tokens`, undefined],
        ['POST', `${ADMIN}/access-tokens`, { name: 'made by a key' }],
        ['DELETE', `${ADMIN}/access-tokens/${ownerToken!.id}`, undefined],
        ['PUT', `${ADMIN}/account`, { name: 'Renamed by a key' }],
      ];
      for (const [method, url, body] of calls) {
        expectError(await t.request(method, url, { token: key, body }), 403, /API key \(df_\) cannot call this route/);
      }
      expect(await accountState(owner.id)).toEqual(before);
      expect((await t.request('GET', `${ADMIN}/account`, { token: owner.token })).status).toBe(200);
    });

    it('answers GET /account for the website owner and names the website', async () => {
      const { owner, website, key } = await keyOfWebsite();
      const response = await t.request('GET', `${ADMIN}/account`, { token: key });
      expect(response.status, response.raw).toBe(200);
      expect(response.body.data).toHaveLength(1);
      expect(response.body.data[0]).toMatchObject({ id: owner.id, _id: owner.id, email: owner.email, name: 'Key Owner', websiteId: website.id });
      const byToken = await t.request('GET', `${ADMIN}/account`, { token: owner.token });
      expect(byToken.body.data[0].websiteId).toBeUndefined();
    });

    it('acts on its own website only', async () => {
      const { owner, website, key } = await keyOfWebsite();
      const other = await createWebsite(t, owner.token);
      expect((await t.request('GET', websiteUrl(website.id), { token: key })).status).toBe(200);
      const before = await snapshot(t, other.id);
      expectError(await t.request('GET', websiteUrl(other.id), { token: key }), 403, /another website/);
      expectError(await t.request('PUT', websiteUrl(other.id), { token: key, body: { name: 'x' } }), 403, /another website/);
      expect(await snapshot(t, other.id)).toEqual(before);
    });
  });
});

describe('the route guard at boot', () => {
  /** A bare Fastify with the route guard and its dependencies, and nothing else. */
  async function guardedApp() {
    const app = Fastify({ logger: false });
    // No database is read at boot: only the credential-change counters the guard's cache starts with.
    const db = { credentialWrites: new WriteWatch(() => false), watchOtherWriters: () => ({ upToDate: () => true, close: async () => {} }) };
    await app.register(database, { db: db as unknown as Db, config: loadConfig({}, { databaseUrl: 'test' }), ownsDb: false });
    await app.register(routeGuard);
    return app;
  }

  it('refuses to boot a route that declares no config.access, naming the route', async () => {
    const app = await guardedApp();
    void app.register(async (api) => {
      api.get('/api/v1/admin/forgotten', async () => ({ ok: true }));
    });
    await expect(app.ready()).rejects.toThrow(/Route GET \/api\/v1\/admin\/forgotten declares no config\.access/);
  });

  it('refuses to boot a website-scoped route whose path has no :websiteId', async () => {
    const app = await guardedApp();
    void app.register(async (api) => {
      api.post('/api/v1/admin/things', { config: { access: { scope: 'website', permission: 'settings:write', action: 'manage', apiKey: true } } }, async () => ({}));
    });
    await expect(app.ready()).rejects.toThrow(/Route POST \/api\/v1\/admin\/things is website-scoped but has no :websiteId/);
  });

  it('boots when every route declares its access', async () => {
    const app = await guardedApp();
    void app.register(async (api) => {
      api.get('/open', { config: { access: { public: true } } }, async () => ({ ok: true }));
      api.get('/websites/:websiteId/things', { config: { access: { scope: 'website', permission: 'settings:read', action: 'read', apiKey: true } } }, async () => ({}));
      api.get('/me', { config: { access: { scope: 'account', permission: 'analytics:read', apiKey: true } } }, async () => ({}));
    });
    await expect(app.ready()).resolves.toBeDefined();
    const response = await app.inject({ method: 'GET', url: '/open' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ ok: true });
    await app.close();
  });
});
