import { createHash } from 'node:crypto';
import { expect, it } from 'vitest';
import { parseCredential } from '../src/auth/tokens.ts';
import { useTestApp } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import {
  UNKNOWN_ID,
  type TestAccount,
  addMember,
  createAccount,
  createApiKey,
  createToken,
  createWebsite,
  expectError,
} from './helpers/factories.ts';

const TOKENS = '/api/v1/admin/access-tokens';
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

describeEachEngine('access tokens', (engine) => {
  const t = useTestApp(engine);

  async function create(token: string, body: unknown = {}) {
    return t.request('POST', TOKENS, { token, body });
  }

  async function createOk(token: string, body: unknown = {}) {
    const response = await create(token, body);
    expect(response.status, response.raw).toBe(200);
    return response.body.data[0] as { id: string; token: string; displayKey: string; permissions: string[]; websiteIds: string[] };
  }

  /** Active (not revoked) token rows of an account, straight from the database. */
  async function activeTokenCount(account: TestAccount): Promise<number> {
    const rows = await t.db
      .selectFrom('access_tokens')
      .select('id')
      .where('account_id', '=', account.id)
      .where('revoked_at', 'is', null)
      .execute();
    return rows.length;
  }

  async function isRevoked(tokenId: string): Promise<boolean> {
    const row = await t.db.selectFrom('access_tokens').select('revoked_at').where('id', '=', tokenId).executeTakeFirstOrThrow();
    return row.revoked_at !== null;
  }

  /** What a client relies on in an error answer. */
  const answerOf = (response: { status: number; body: any }) => [response.status, response.body.error.code, response.body.error.message];

  // --- Creation -------------------------------------------------------------------------------

  it('creates a token and returns the raw value, in the dft_ format, with the masked form', async () => {
    const account = await createAccount(t);
    const website = await createWebsite(t, account.token);
    const response = await create(account.token, {
      name: 'CI deploy',
      permissions: ['websites:read', 'analytics:read'],
      websiteIds: [website.id],
    });
    expect(response.status, response.raw).toBe(200);
    expect(response.body.status).toBe('success');
    expect(response.body.data).toHaveLength(1);
    const created = response.body.data[0];
    expect(created).toMatchObject({
      _id: created.id,
      name: 'CI deploy',
      permissions: ['websites:read', 'analytics:read'],
      websiteIds: [website.id],
      lastUsedAt: null,
    });
    expect(created.id).toMatch(/^[0-9a-f]{24}$/);
    expect(created.createdAt).toMatch(ISO_MS);
    expect(created.token).toMatch(/^dft_[0-9A-Za-z]{36}$/);
    expect(parseCredential(created.token)).toBe('token');
    expect(created.displayKey).toBe(`${created.token.slice(0, 8)}...${created.token.slice(-4)}`);
    expect(created.displayKey).toMatch(/^dft_[0-9A-Za-z]{4}\.\.\.[0-9A-Za-z]{4}$/);
  });

  it("accepts every permission name of the contract: admin-api.md's 15, the website API's and the notes'", async () => {
    const account = await createAccount(t);
    const contract = [
      'analytics:read', 'api-keys:read', 'api-keys:write', 'websites:read', 'websites:write', 'settings:read', 'settings:write',
      'funnels:read', 'funnels:write', 'alerts:read', 'alerts:write', 'team:read', 'team:write', 'goals:read', 'goals:write',
      'payments:read', 'payments:write', 'identify:write', 'notes:read', 'notes:write', 'segments:read', 'segments:write', 'exports:read',
    ];
    const created = await createOk(account.token, { permissions: contract });
    expect(created.permissions).toEqual(contract);
  });

  it('defaults permissions to ["*"], websiteIds to [] and gives a name', async () => {
    const account = await createAccount(t);
    const created = await createOk(account.token);
    expect(created.permissions).toEqual(['*']);
    expect(created.websiteIds).toEqual([]);
    expect(created).toMatchObject({ name: expect.any(String) });
    const row = await t.db.selectFrom('access_tokens').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(JSON.parse(row.permissions)).toEqual(['*']);
    expect(JSON.parse(row.website_ids)).toEqual([]);
  });

  it('lists tokens masked: displayKey only, never the raw token or its digest', async () => {
    const account = await createAccount(t);
    const created = await createOk(account.token, { name: 'listed' });
    const list = await t.request('GET', TOKENS, { token: account.token });
    expect(list.status, list.raw).toBe(200);
    expect(list.body.status).toBe('success');
    // The CLI's admin token and the new one.
    expect(list.body.data).toHaveLength(2);
    const listed = list.body.data.find((row: { id: string }) => row.id === created.id);
    expect(listed).toMatchObject({
      id: created.id,
      _id: created.id,
      name: 'listed',
      displayKey: created.displayKey,
      permissions: ['*'],
      websiteIds: [],
      createdAt: expect.stringMatching(ISO_MS),
    });
    expect(listed).toHaveProperty('lastUsedAt');
    expect(listed).not.toHaveProperty('token');
    expect(listed).not.toHaveProperty('digest');

    const digests = await t.db.selectFrom('access_tokens').select('digest').where('account_id', '=', account.id).execute();
    expect(digests).toHaveLength(2);
    for (const { digest } of digests) expect(list.raw).not.toContain(digest);
    expect(list.raw).not.toContain(created.token);
    expect(list.raw).not.toContain(account.token);
    expect(list.raw).not.toContain(created.token.slice(4, -4));
  });

  it("lists only the calling account's tokens", async () => {
    const first = await createAccount(t);
    const second = await createAccount(t);
    const theirs = await createOk(second.token, { name: 'theirs' });
    const list = await t.request('GET', TOKENS, { token: first.token });
    expect(list.status, list.raw).toBe(200);
    expect(list.body.data).toHaveLength(1);
    expect(list.raw).not.toContain(theirs.id);
  });

  it('shows the raw token in exactly one response and stores only its SHA-256 digest', async () => {
    const account = await createAccount(t);
    const website = await createWebsite(t, account.token);
    const created = await createOk(account.token, { name: 'secret' });
    const raw = created.token;
    const secretPart = raw.slice(4);

    const later = [
      await t.request('GET', TOKENS, { token: account.token }),
      await t.request('GET', TOKENS, { token: raw }),
      await t.request('GET', '/api/v1/admin/account', { token: raw }),
      await t.request('GET', '/api/v1/admin/websites', { token: raw }),
      await t.request('GET', `/api/v1/admin/websites/${website.id}`, { token: raw }),
      await t.request('POST', TOKENS, { token: raw, body: { name: 'child' } }),
    ];
    for (const response of later) {
      expect(response.status, response.raw).toBe(200);
      expect(response.raw).not.toContain(secretPart);
    }

    const row = await t.db.selectFrom('access_tokens').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(row.digest).toBe(sha256(raw));
    expect(row.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(row.display_key).toBe(created.displayKey);
    for (const [column, value] of Object.entries(row)) {
      expect(String(value), `column ${column}`).not.toContain(secretPart);
    }
    expect(t.logLines.join('\n')).not.toContain(secretPart);
  });

  it('creates a token that works with exactly the permissions it was given', async () => {
    const account = await createAccount(t);
    const website = await createWebsite(t, account.token);
    const created = await createOk(account.token, { permissions: ['websites:read'] });
    const websites = await t.request('GET', '/api/v1/admin/websites', { token: created.token });
    expect(websites.status, websites.raw).toBe(200);
    expect(websites.body.data.map((w: { id: string }) => w.id)).toEqual([website.id]);
    expectError(await t.request('GET', TOKENS, { token: created.token }), 403, /api-keys:read/);
    expectError(await t.request('GET', '/api/v1/admin/account', { token: created.token }), 403, /analytics:read/);
  });

  it('creates a token limited to a website that sees only that website', async () => {
    const account = await createAccount(t);
    const first = await createWebsite(t, account.token);
    await createWebsite(t, account.token);
    const created = await createOk(account.token, { permissions: ['websites:read', 'settings:read'], websiteIds: [first.id] });
    const websites = await t.request('GET', '/api/v1/admin/websites', { token: created.token });
    expect(websites.body.data.map((w: { id: string }) => w.id)).toEqual([first.id]);
  });

  it('accepts a website the account is a member of', async () => {
    const owner = await createAccount(t);
    const member = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    await addMember(t, website.id, member.id, 'viewer');
    const created = await createOk(member.token, { websiteIds: [website.id] });
    expect(created.websiteIds).toEqual([website.id]);
  });

  it('accepts a future expiresAt and returns it', async () => {
    const account = await createAccount(t);
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const created = await createOk(account.token, { expiresAt });
    expect(created).toMatchObject({ expiresAt });
    expect((await t.request('GET', TOKENS, { token: created.token })).status).toBe(200);
  });

  // --- Creation: bad input ----------------------------------------------------------------------

  const badBodies: Array<[string, Record<string, unknown>, RegExp]> = [
    ['an unknown permission name', { permissions: ['analytics:read', 'websites:delete'] }, /body\.permissions\[1\]/],
    ['an empty permissions array', { permissions: [] }, /body\.permissions/],
    ['duplicate permissions', { permissions: ['websites:read', 'websites:read'] }, /body\.permissions.*duplicate/],
    ['permissions that are not an array', { permissions: 'websites:read' }, /body\.permissions: must be array/],
    ['an empty name', { name: '' }, /body\.name/],
    ['a name of 101 characters', { name: 'x'.repeat(101) }, /body\.name: .*100/],
    ['an unknown field', { name: 'ok', scopes: ['*'] }, /body\.scopes: is not an allowed field/],
    ['a malformed website id', { websiteIds: ['not-an-id'] }, /body\.websiteIds\[0\]/],
    ['duplicate website ids', { websiteIds: [UNKNOWN_ID, UNKNOWN_ID] }, /body\.websiteIds/],
    ['an expiresAt in the past', { expiresAt: new Date(Date.now() - 60_000).toISOString() }, /body\.expiresAt: .*future/],
    ['an expiresAt that is not a date', { expiresAt: 'tomorrow' }, /body\.expiresAt/],
  ];
  for (const [what, body, pattern] of badBodies) {
    it(`answers 400 naming the field for ${what}, and creates nothing`, async () => {
      const account = await createAccount(t);
      expectError(await create(account.token, body), 400, pattern);
      expect(await activeTokenCount(account)).toBe(1);
    });
  }

  it("answers 403 alike for an unknown website id and another account's website, naming body.websiteIds[i], and creates nothing", async () => {
    const account = await createAccount(t);
    const own = await createWebsite(t, account.token);
    const stranger = await createAccount(t);
    const theirs = await createWebsite(t, stranger.token);
    const unknown = await create(account.token, { websiteIds: [own.id, UNKNOWN_ID] });
    const foreign = await create(account.token, { websiteIds: [own.id, theirs.id] });
    expectError(unknown, 403, /body\.websiteIds\[1\]/);
    expectError(foreign, 403, /body\.websiteIds\[1\]/);
    // No probing: the two answers say the same (only a requestId may differ).
    expect(answerOf(foreign)).toEqual(answerOf(unknown));
    expect(await activeTokenCount(account)).toBe(1);
  });

  it('answers a website-limited creator alike for an unknown id, a foreign one and one of the account it cannot reach', async () => {
    const account = await createAccount(t);
    const first = await createWebsite(t, account.token);
    const second = await createWebsite(t, account.token);
    const stranger = await createAccount(t);
    const theirs = await createWebsite(t, stranger.token);
    const creator = await createToken(t, account, ['*'], [first.id]);
    const answers = await Promise.all([second.id, theirs.id, UNKNOWN_ID].map((id) => create(creator, { websiteIds: [id] })));
    for (const answer of answers) expectError(answer, 403, /body\.websiteIds\[0\]/);
    expect(new Set(answers.map((answer) => JSON.stringify(answerOf(answer)))).size).toBe(1);
    expect(await activeTokenCount(account)).toBe(2);
  });

  it('checks the website list (403) before the rest of the body (400)', async () => {
    const account = await createAccount(t);
    const past = new Date(Date.now() - 60_000).toISOString();
    expectError(await create(account.token, { websiteIds: [UNKNOWN_ID], expiresAt: past }), 403, /body\.websiteIds\[0\]/);
  });

  // --- Creation: a token never exceeds its creator ------------------------------------------------

  it('answers 403 when the creator lacks a requested permission, and creates nothing', async () => {
    const account = await createAccount(t);
    const creator = await createToken(t, account, ['api-keys:write', 'websites:read']);
    expectError(await create(creator, { permissions: ['websites:read', 'analytics:read'] }), 403, /permission/);
    expectError(await create(creator, { permissions: ['*'] }), 403);
    // Omitted permissions mean ["*"], which this creator does not hold.
    expectError(await create(creator, {}), 403);
    expect(await activeTokenCount(account)).toBe(2);
  });

  it('lets a token create a token with fewer permissions', async () => {
    const account = await createAccount(t);
    const creator = await createToken(t, account, ['api-keys:write', 'websites:read', 'analytics:read']);
    const created = await createOk(creator, { permissions: ['websites:read'] });
    expect(created.permissions).toEqual(['websites:read']);
    const same = await createOk(creator, { permissions: ['api-keys:write', 'websites:read', 'analytics:read'] });
    expect(same.permissions).toEqual(['api-keys:write', 'websites:read', 'analytics:read']);
  });

  it('answers 403 when a website-limited creator asks for a wider website list, and creates nothing', async () => {
    const account = await createAccount(t);
    const first = await createWebsite(t, account.token);
    const second = await createWebsite(t, account.token);
    const creator = await createToken(t, account, ['*'], [first.id]);
    expectError(await create(creator, { websiteIds: [first.id, second.id] }), 403, /website/);
    expectError(await create(creator, { websiteIds: [second.id] }), 403);
    // [] means every website, which is wider than any list; omitted means [].
    expectError(await create(creator, { websiteIds: [] }), 403);
    expectError(await create(creator, {}), 403);
    expect(await activeTokenCount(account)).toBe(2);
  });

  it('lets a website-limited token create a token with a narrower website list', async () => {
    const account = await createAccount(t);
    const first = await createWebsite(t, account.token);
    const second = await createWebsite(t, account.token);
    const creator = await createToken(t, account, ['*'], [first.id, second.id]);
    const narrower = await createOk(creator, { websiteIds: [second.id] });
    expect(narrower.websiteIds).toEqual([second.id]);
    const same = await createOk(creator, { websiteIds: [first.id, second.id] });
    expect(same.websiteIds).toEqual([first.id, second.id]);
  });

  // --- The token limit ----------------------------------------------------------------------------

  it('answers 400 naming the limit for the 21st active token, and allows one again after a revoke', async () => {
    const account = await createAccount(t);
    // The account starts with its CLI token; 19 more make 20.
    const ids: string[] = [];
    for (let i = 0; i < 19; i++) ids.push((await createOk(account.token, { name: `token ${i}` })).id);
    expect(await activeTokenCount(account)).toBe(20);

    expectError(await create(account.token, { name: 'one too many' }), 400, /limit.*20|20.*limit/i);
    expect(await activeTokenCount(account)).toBe(20);

    const revoke = await t.request('DELETE', `${TOKENS}/${ids[0]}`, { token: account.token });
    expect(revoke.status, revoke.raw).toBe(200);
    await createOk(account.token, { name: 'fits again' });
    expect(await activeTokenCount(account)).toBe(20);
    expectError(await create(account.token, { name: 'over again' }), 400, /limit/i);
  });

  it('never exceeds the limit when tokens are created concurrently', async () => {
    const account = await createAccount(t);
    const responses = await Promise.all(Array.from({ length: 30 }, (_, i) => create(account.token, { name: `parallel ${i}` })));
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(19);
    expect(statuses.filter((status) => status === 400)).toHaveLength(11);
    expect(await activeTokenCount(account)).toBe(20);
  });

  it("does not count another account's tokens toward the limit", async () => {
    const busy = await createAccount(t);
    for (let i = 0; i < 19; i++) await createOk(busy.token);
    const other = await createAccount(t);
    await createOk(other.token);
  });

  // --- Revocation ---------------------------------------------------------------------------------

  it('revokes a token: answers a message, the list no longer shows it and the token answers 401', async () => {
    const account = await createAccount(t);
    const created = await createOk(account.token, { name: 'short-lived' });
    expect((await t.request('GET', TOKENS, { token: created.token })).status).toBe(200);

    const response = await t.request('DELETE', `${TOKENS}/${created.id}`, { token: account.token });
    expect(response.status, response.raw).toBe(200);
    expect(response.body).toEqual({ status: 'success', data: [{ message: expect.any(String) }] });

    const list = await t.request('GET', TOKENS, { token: account.token });
    expect(list.body.data.map((row: { id: string }) => row.id)).not.toContain(created.id);
    expect(list.body.data).toHaveLength(1);
    expectError(await t.request('GET', TOKENS, { token: created.token }), 401);
    expect(await isRevoked(created.id)).toBe(true);
  });

  it("answers 404 for another account's token and leaves it working", async () => {
    const account = await createAccount(t);
    const stranger = await createAccount(t);
    const theirs = await createOk(stranger.token);
    expectError(await t.request('DELETE', `${TOKENS}/${theirs.id}`, { token: account.token }), 404);
    expect(await isRevoked(theirs.id)).toBe(false);
    expect((await t.request('GET', TOKENS, { token: theirs.token })).status).toBe(200);
  });

  it('answers 404 for a token that is already revoked, and for an unknown id', async () => {
    const account = await createAccount(t);
    const created = await createOk(account.token);
    expect((await t.request('DELETE', `${TOKENS}/${created.id}`, { token: account.token })).status).toBe(200);
    expectError(await t.request('DELETE', `${TOKENS}/${created.id}`, { token: account.token }), 404);
    expectError(await t.request('DELETE', `${TOKENS}/${UNKNOWN_ID}`, { token: account.token }), 404);
  });

  it('refuses with 403 to let a narrow token revoke a wider one, but lets it revoke itself and narrower ones', async () => {
    const account = await createAccount(t);
    const website = await createWebsite(t, account.token);
    const narrow = await createToken(t, account, ['api-keys:write', 'api-keys:read'], [website.id]);
    const narrower = await createToken(t, account, ['api-keys:read'], [website.id]);
    const ids = await t.request('GET', TOKENS, { token: account.token });
    const idOf = (raw: string) => ids.body.data.find((row: { displayKey: string }) => row.displayKey === `${raw.slice(0, 8)}...${raw.slice(-4)}`).id;
    const adminId = idOf(account.token);

    expectError(await t.request('DELETE', `${TOKENS}/${adminId}`, { token: narrow }), 403, /wider rights/);
    expect(await isRevoked(adminId)).toBe(false);
    expect((await t.request('DELETE', `${TOKENS}/${idOf(narrower)}`, { token: narrow })).status).toBe(200);
    expect((await t.request('DELETE', `${TOKENS}/${idOf(narrow)}`, { token: narrow })).status).toBe(200);
    expectError(await t.request('GET', TOKENS, { token: narrow }), 401);
  });

  it('answers 400 naming the parameter for a malformed tokenId', async () => {
    const account = await createAccount(t);
    expectError(await t.request('DELETE', `${TOKENS}/not-a-token-id`, { token: account.token }), 400, /tokenId/);
    expectError(await t.request('DELETE', `${TOKENS}/${UNKNOWN_ID.toUpperCase()}`, { token: account.token }), 400, /tokenId/);
    expect(await activeTokenCount(account)).toBe(1);
  });

  // --- Who may call these routes --------------------------------------------------------------------

  it('answers 401 without a credential on every route', async () => {
    const account = await createAccount(t);
    const created = await createOk(account.token);
    for (const [method, url, body] of [
      ['GET', TOKENS, undefined],
      ['POST', TOKENS, { name: 'anonymous' }],
      ['DELETE', `${TOKENS}/${created.id}`, undefined],
    ] as const) {
      const response = await t.request(method, url, { body });
      expectError(response, 401);
      expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
    }
    expect(await activeTokenCount(account)).toBe(2);
    expect(await isRevoked(created.id)).toBe(false);
  });

  it('answers 403 for GET without api-keys:read', async () => {
    const account = await createAccount(t);
    const token = await createToken(t, account, ['api-keys:write', 'websites:read']);
    expectError(await t.request('GET', TOKENS, { token }), 403, /api-keys:read/);
  });

  it('answers 403 for POST and DELETE without api-keys:write, and changes nothing', async () => {
    const account = await createAccount(t);
    const created = await createOk(account.token);
    const token = await createToken(t, account, ['api-keys:read']);
    expectError(await create(token, { permissions: ['api-keys:read'] }), 403, /api-keys:write/);
    // The body is not looked at before the permission.
    expectError(await create(token, { nope: true }), 403, /api-keys:write/);
    expectError(await t.request('DELETE', `${TOKENS}/${created.id}`, { token }), 403, /api-keys:write/);
    expectError(await t.request('DELETE', `${TOKENS}/not-an-id`, { token }), 403);
    expect(await activeTokenCount(account)).toBe(3);
    expect(await isRevoked(created.id)).toBe(false);
  });

  it('answers 403 for a df_ key on every route, and changes nothing', async () => {
    const account = await createAccount(t);
    const website = await createWebsite(t, account.token);
    const key = await createApiKey(t, account.token, website.id);
    const created = await createOk(account.token);
    expectError(await t.request('GET', TOKENS, { token: key.key }), 403, /df_/);
    expectError(await create(key.key, { name: 'from a key' }), 403, /df_/);
    expectError(await t.request('DELETE', `${TOKENS}/${created.id}`, { token: key.key }), 403, /df_/);
    expect(await activeTokenCount(account)).toBe(2);
    expect(await isRevoked(created.id)).toBe(false);
  });
});
