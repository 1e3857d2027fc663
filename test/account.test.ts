import { expect, it } from 'vitest';
import { useTestApp } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { addMember, createAccount, createApiKey, createToken, createWebsite, expectError } from './helpers/factories.ts';

const ACCOUNT = '/api/v1/admin/account';
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describeEachEngine('account', (engine) => {
  const t = useTestApp(engine);

  async function storedName(accountId: string): Promise<string> {
    const row = await t.db.selectFrom('accounts').select('name').where('id', '=', accountId).executeTakeFirstOrThrow();
    return row.name;
  }

  it('answers GET with the profile and plan of the calling account', async () => {
    const account = await createAccount(t, 'Ada Lovelace');
    const response = await t.request('GET', ACCOUNT, { token: account.token });
    expect(response.status, response.raw).toBe(200);
    expect(response.body.status).toBe('success');
    expect(response.body.data).toHaveLength(1);
    const data = response.body.data[0];
    expect(data).toMatchObject({
      id: account.id,
      _id: account.id,
      name: 'Ada Lovelace',
      email: account.email,
      plan: {
        name: expect.any(String),
        limits: { tokensPerAccount: 20, apiKeysPerWebsite: 10, alertsPerWebsite: 25 },
      },
    });
    expect(data.createdAt).toMatch(ISO_MS);
    const row = await t.db.selectFrom('accounts').select('created_at').where('id', '=', account.id).executeTakeFirstOrThrow();
    expect(data.createdAt).toBe(row.created_at);
    expect(data).not.toHaveProperty('websiteId');
  });

  it("answers GET with a df_ key for the website's owner and adds websiteId", async () => {
    const owner = await createAccount(t, 'Owner');
    const member = await createAccount(t, 'Member');
    const website = await createWebsite(t, owner.token);
    await addMember(t, website.id, member.id, 'member');
    // The member creates the key, yet the key answers for the website's owner.
    const key = await createApiKey(t, member.token, website.id);
    const response = await t.request('GET', ACCOUNT, { token: key.key });
    expect(response.status, response.raw).toBe(200);
    expect(response.body.data[0]).toMatchObject({
      id: owner.id,
      _id: owner.id,
      name: 'Owner',
      email: owner.email,
      websiteId: website.id,
    });
  });

  it('answers 401 without a token, on GET and PUT', async () => {
    const get = await t.request('GET', ACCOUNT);
    expectError(get, 401);
    expect(get.headers['www-authenticate']).toMatch(/^Bearer/);
    expectError(await t.request('PUT', ACCOUNT, { body: { name: 'Nobody' } }), 401);
  });

  it('answers 403 on GET and PUT for a token without analytics:read, and keeps the name', async () => {
    const account = await createAccount(t, 'Kept');
    const token = await createToken(t, account, ['websites:read', 'api-keys:write']);
    expectError(await t.request('GET', ACCOUNT, { token }), 403, /analytics:read/);
    expectError(await t.request('PUT', ACCOUNT, { token, body: { name: 'Changed' } }), 403, /analytics:read/);
    expect(await storedName(account.id)).toBe('Kept');
  });

  it('answers GET and PUT for a token that holds only analytics:read', async () => {
    const account = await createAccount(t, 'Before');
    const token = await createToken(t, account, ['analytics:read']);
    expect((await t.request('GET', ACCOUNT, { token })).status).toBe(200);
    const response = await t.request('PUT', ACCOUNT, { token, body: { name: 'After' } });
    expect(response.status, response.raw).toBe(200);
    expect(await storedName(account.id)).toBe('After');
  });

  it('renames the account and answers with the updated account', async () => {
    const account = await createAccount(t, 'Old Name');
    const response = await t.request('PUT', ACCOUNT, { token: account.token, body: { name: 'New Name' } });
    expect(response.status, response.raw).toBe(200);
    expect(response.body.status).toBe('success');
    expect(response.body.data).toHaveLength(1);
    expect(response.body.data[0]).toMatchObject({ id: account.id, _id: account.id, name: 'New Name', email: account.email });
    expect(response.body.data[0]).not.toHaveProperty('websiteId');
    const get = await t.request('GET', ACCOUNT, { token: account.token });
    expect(get.body.data[0].name).toBe('New Name');
    expect(await storedName(account.id)).toBe('New Name');
  });

  it('accepts names of 1 and of 100 characters', async () => {
    const account = await createAccount(t);
    const one = await t.request('PUT', ACCOUNT, { token: account.token, body: { name: 'A' } });
    expect(one.status, one.raw).toBe(200);
    expect(await storedName(account.id)).toBe('A');
    const long = 'n'.repeat(100);
    const hundred = await t.request('PUT', ACCOUNT, { token: account.token, body: { name: long } });
    expect(hundred.status, hundred.raw).toBe(200);
    expect(hundred.body.data[0].name).toBe(long);
    expect(await storedName(account.id)).toBe(long);
  });

  it('only changes the calling account', async () => {
    const first = await createAccount(t, 'First');
    const second = await createAccount(t, 'Second');
    await t.request('PUT', ACCOUNT, { token: first.token, body: { name: 'Renamed' } });
    expect(await storedName(first.id)).toBe('Renamed');
    expect(await storedName(second.id)).toBe('Second');
  });

  const refused: Array<[string, unknown, RegExp]> = [
    ['an empty name', { name: '' }, /body\.name/],
    ['a name of 101 characters', { name: 'x'.repeat(101) }, /body\.name: .*100/],
    ['an unknown field', { name: 'Valid', email: 'new@example.com' }, /body\.email: is not an allowed field/],
    ['a name that is not a string', { name: 42 }, /body\.name: must be string/],
    ['a null name', { name: null }, /body\.name/],
    ['a missing name', {}, /body\.name: is required/],
  ];
  for (const [what, body, pattern] of refused) {
    it(`answers 400 naming the field for ${what}, and keeps the name`, async () => {
      const account = await createAccount(t, 'Unchanged');
      expectError(await t.request('PUT', ACCOUNT, { token: account.token, body }), 400, pattern);
      expect(await storedName(account.id)).toBe('Unchanged');
      expect((await t.request('GET', ACCOUNT, { token: account.token })).body.data[0].name).toBe('Unchanged');
    });
  }

  it('answers 400 for a PUT without a body, and for malformed JSON', async () => {
    const account = await createAccount(t, 'Unchanged');
    expectError(await t.request('PUT', ACCOUNT, { token: account.token }), 400, /body\.name: is required/);
    expectError(
      await t.request('PUT', ACCOUNT, { token: account.token, payload: '{"name":', headers: { 'content-type': 'application/json' } }),
      400,
      /JSON/,
    );
    expect(await storedName(account.id)).toBe('Unchanged');
  });

  it('answers 403 for PUT with a df_ key, before looking at the body, and keeps the name', async () => {
    const owner = await createAccount(t, 'Owner');
    const website = await createWebsite(t, owner.token);
    const key = await createApiKey(t, owner.token, website.id);
    expectError(await t.request('PUT', ACCOUNT, { token: key.key, body: { name: 'Hijacked' } }), 403, /df_/);
    expectError(await t.request('PUT', ACCOUNT, { token: key.key, body: { nope: 1 } }), 403);
    expect(await storedName(owner.id)).toBe('Owner');
  });
});
