import { expect, it } from 'vitest';
import { useTestApp } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { createAccount, createApiKey, createToken, createWebsite, expectError } from './helpers/factories.ts';
import { generateCredential } from '../src/auth/tokens.ts';

describeEachEngine('authentication', (engine) => {
  const t = useTestApp(engine);
  const ACCOUNT = '/api/v1/admin/account';

  it('answers 401 with WWW-Authenticate when the header is missing', async () => {
    const response = await t.request('GET', ACCOUNT);
    expectError(response, 401, /missing/);
    expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
  });

  it('answers 401 for a header that is not Bearer', async () => {
    expectError(await t.request('GET', ACCOUNT, { headers: { authorization: 'Basic abc' } }), 401, /Bearer/);
  });

  it('answers 401 for a malformed credential', async () => {
    expectError(await t.request('GET', ACCOUNT, { token: 'dft_short' }), 401, /malformed/);
  });

  it('answers 401 for a wrong checksum without a database read', async () => {
    const account = await createAccount(t);
    const last = account.token.at(-1) === 'a' ? 'b' : 'a';
    const tampered = account.token.slice(0, -1) + last;
    expectError(await t.request('GET', ACCOUNT, { token: tampered }), 401, /malformed/);
  });

  it('answers 401 for an unknown token with a valid checksum', async () => {
    expectError(await t.request('GET', ACCOUNT, { token: generateCredential('token') }), 401, /unknown/);
  });

  it('answers 401 for an unknown API key with a valid checksum', async () => {
    expectError(await t.request('GET', ACCOUNT, { token: generateCredential('apiKey') }), 401, /unknown/);
  });

  it('answers 401 once a token is revoked', async () => {
    const account = await createAccount(t);
    const created = await t.request('POST', '/api/v1/admin/access-tokens', { token: account.token, body: { name: 'temp' } });
    const { id, token } = created.body.data[0];
    expect((await t.request('GET', ACCOUNT, { token })).status).toBe(200);
    expect((await t.request('DELETE', `/api/v1/admin/access-tokens/${id}`, { token: account.token })).status).toBe(200);
    expectError(await t.request('GET', ACCOUNT, { token }), 401, /revoked/);
  });

  it('answers 401 once a token has expired', async () => {
    const account = await createAccount(t);
    const created = await t.request('POST', '/api/v1/admin/access-tokens', {
      token: account.token,
      body: { name: 'short-lived', expiresAt: new Date(Date.now() + 60_000).toISOString() },
    });
    const { id, token } = created.body.data[0];
    expect((await t.request('GET', ACCOUNT, { token })).status).toBe(200);
    await t.db.updateTable('access_tokens').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('id', '=', id).execute();
    expectError(await t.request('GET', ACCOUNT, { token }), 401, /expired/);
  });

  it('records lastUsedAt when a token is used', async () => {
    const account = await createAccount(t);
    const narrow = await createToken(t, account, ['api-keys:read']);
    await t.request('GET', '/api/v1/admin/access-tokens', { token: narrow });
    const list = await t.request('GET', '/api/v1/admin/access-tokens', { token: account.token });
    const used = list.body.data.filter((row: { lastUsedAt: string | null }) => row.lastUsedAt !== null);
    expect(used).toHaveLength(2);
    expect(Date.parse(used[0].lastUsedAt)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('checks 401 before 404 before 403 before the body', async () => {
    const owner = await createAccount(t);
    const stranger = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const url = `/api/v1/admin/websites/${website.id}`;
    // No credential with a bad body: 401.
    expectError(await t.request('PUT', url, { payload: '{oops', headers: { 'content-type': 'application/json' } }), 401);
    // Another account's website with a bad body: 404.
    expectError(await t.request('PUT', url, { token: stranger.token, payload: '{oops', headers: { 'content-type': 'application/json' } }), 404);
    // The website's owner without the permission, bad body: 403.
    const readOnly = await createToken(t, owner, ['settings:read']);
    expectError(await t.request('PUT', url, { token: readOnly, body: { nope: 1 } }), 403);
    // Allowed, bad body: 400.
    expectError(await t.request('PUT', url, { token: owner.token, body: { nope: 1 } }), 400, /body\.nope/);
  });

  it('never writes a raw credential to the log', async () => {
    const account = await createAccount(t);
    const website = await createWebsite(t, account.token);
    const key = await createApiKey(t, account.token, website.id);
    await t.request('GET', '/api/v1/admin/account', { token: key.key });
    await t.request('GET', '/api/v1/admin/account', { token: `${account.token}x` });
    // A client that pastes its credential into the URL: the URL is logged, the credential masked.
    await t.request('GET', `/api/v1/admin/account?access_token=${account.token}&key=${key.key}`);
    const log = t.logLines.join('\n');
    expect(log).toContain('/api/v1/admin/account?access_token=[redacted]&key=[redacted]');
    expect(log).not.toContain(account.token);
    expect(log).not.toContain(key.key);
  });

  // Every place a URL reaches an answer or a log line: the 404 for an unknown route, the
  // incoming-request line, router errors (a bad %-escape), validation messages.
  it('answers and logs no query value and no credential-shaped path segment', async () => {
    const account = await createAccount(t);
    const website = await createWebsite(t, account.token);
    const key = await createApiKey(t, account.token, website.id);
    const lookalikes = [
      `rk_live_${'4eC39HqLyjWDarjtT1zdp7dc'}`,
      `sk_test_${'51HqLyjWDarjtT1zdp7dcXyZ'}`,
      'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c',
      `ghp_${'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8'}`,
      'xoxb-2048-1234567890-AbCdEfGhIjKlMnOpQrStUvWx',
      'Zq8x7Lw2Vn4Rt6Yp0Ks3Hd9Fj1Mb5Gc8',
    ];
    const secrets = [account.token, key.key, ...lookalikes];
    const linesBefore = t.logLines.length;
    const answers: string[] = [];
    const call = async (method: string, url: string, token?: string) => {
      const response = await t.request(method, url, { token });
      answers.push(response.raw);
      return response;
    };

    for (const secret of secrets) {
      const response = await call('GET', `/api/v1/admin/${secret}`);
      expectError(response, 404, /^No route GET \/api\/v1\/admin\/\[redacted\]$/);
    }
    // A public route that logs each request (ingestion logs none at info).
    await call('POST', `/api/v1/dashboard/sign-in?token=${account.token}`);
    await call('GET', `/api/v1/admin/account?api_key=${lookalikes[0]}&period=last_week`);
    expectError(await call('GET', `/api/v1/admin/websites/${key.key}`, account.token), 400, /path\.websiteId/);
    const history = `/api/v1/admin/websites/${website.id}/alerts/history`;
    expectError(await call('GET', `${history}?${lookalikes[1]}=1`, account.token), 400, /query\./);
    expectError(await call('GET', `/api/v1/admin/%zz/${account.token}?access_token=${key.key}`), 400, /%-escapes/);
    await call('GET', `/api/v1/admin/websites/${website.id}/apikeys?note=${lookalikes[2]}`, account.token);

    const log = t.logLines.slice(linesBefore).join('\n');
    expect(log).toContain('"url":"/api/v1/admin/[redacted]"');
    expect(log).toContain('"url":"/api/v1/dashboard/sign-in?token=[redacted]"');
    expect(log).toContain('"url":"/api/v1/admin/account?api_key=[redacted]&period=[redacted]"');
    expect(log).toContain(`"url":"/api/v1/admin/websites/[redacted]"`);
    expect(log).toContain(`"url":"/api/v1/admin/%zz/[redacted]?access_token=[redacted]"`);
    // Ids and route words stay readable.
    expect(log).toContain(`"url":"/api/v1/admin/websites/${website.id}/apikeys?note=[redacted]"`);
    expect(log).not.toContain('last_week');
    const answered = answers.join('\n');
    for (const secret of secrets) {
      expect(answered, `an answer contains ${secret}`).not.toContain(secret);
      expect(log, `the log contains ${secret}`).not.toContain(secret);
    }
  });
});

// On PostgreSQL the counters live in the database (shared by every instance), on SQLite in memory.
describeEachEngine('rate limiting', (engine) => {
  const t = useTestApp(engine, { rateLimit: { perCredential: 3, perAddress: 2, perPublicAddress: 4, windowMs: 60_000 } });

  it('limits each credential separately and answers 429 with Retry-After', async () => {
    const first = await createAccount(t);
    const second = await createAccount(t);
    for (let i = 0; i < 3; i++) expect((await t.request('GET', '/api/v1/admin/account', { token: first.token })).status).toBe(200);
    const limited = await t.request('GET', '/api/v1/admin/account', { token: first.token });
    expectError(limited, 429, /Rate limit/);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect((await t.request('GET', '/api/v1/admin/account', { token: second.token })).status).toBe(200);
  });

  it('counts requests sent at once each in its own place (PostgreSQL counts them in one statement)', async () => {
    const first = await createAccount(t);
    const second = await createAccount(t);
    const both = [first, second, first, second, first, second, first, second, first];
    const answers = await Promise.all(both.map(({ token }) => t.request('GET', '/api/v1/admin/account', { token })));
    const of = (token: string) => answers.filter((_, i) => both[i]!.token === token);
    for (const { token } of [first, second]) {
      expect(of(token).map((answer) => answer.status).sort()).toEqual([200, 200, 200, ...(token === first.token ? [429, 429] : [429])]);
      const remaining = of(token)
        .filter((answer) => answer.status === 200)
        .map((answer) => answer.headers['x-ratelimit-remaining'])
        .sort();
      expect(remaining).toEqual(['0', '1', '2']);
    }
  });

  it('limits requests without a valid credential per client address', async () => {
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await t.request('GET', '/api/v1/admin/account')).status);
    expect(statuses).toEqual([401, 401, 429]);
  });

  it('gives public ingestion a budget of its own per address, apart from the admin routes', async () => {
    const from = (remoteAddress: string, url: string, method: 'GET' | 'POST' = 'POST') =>
      t.app.inject({ method, url, remoteAddress, headers: { 'content-type': 'application/json' }, payload: '{}' });
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await from('10.9.9.9', '/api/events')).statusCode);
    expect(statuses.slice(0, 4).every((status) => status !== 429)).toBe(true);
    expect(statuses[4]).toBe(429);
    expect((await from('10.9.9.9', '/api/v1/admin/account', 'GET')).statusCode).toBe(401);
  });
});

describeEachEngine('rate-limit windows', (engine) => {
  const t = useTestApp(engine, { rateLimit: { perCredential: 2, perAddress: 2, perPublicAddress: 2, windowMs: 1000 } });

  it('starts a new window for the credential once its window has ended', async () => {
    const { token } = await createAccount(t);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await t.request('GET', '/api/v1/admin/account', { token })).status);
    expect(statuses).toEqual([200, 200, 429]);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const again = await t.request('GET', '/api/v1/admin/account', { token });
    expect(again.status).toBe(200);
    expect(again.headers['x-ratelimit-remaining']).toBe('1');
  });
});
