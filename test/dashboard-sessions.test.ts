import { expect, it } from 'vitest';
import { useTestApp } from './helpers/app.ts';
import { TEST_PASSWORD, sessionCookieOf, signInAs } from './helpers/dashboard-session.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { createAccount, createToken, createWebsite, expectError, UNKNOWN_ID } from './helpers/factories.ts';

const D = '/api/v1/dashboard';

describeEachEngine('dashboard sessions', (engine) => {
  const t = useTestApp(engine, { signInLimit: { perAccount: 3, perAddress: 1000, windowMs: 60_000 } });

  it('signs in with e-mail and password: an HttpOnly SameSite=Lax cookie, only its digest stored', async () => {
    const account = await createAccount(t);
    const session = await signInAs(t, account.id);
    expect(session.cookie).toMatch(/^sightline_session=dss_/);
    const raw = session.cookie.split('=')[1]!;
    const rows = await t.db.selectFrom('dashboard_sessions').selectAll().where('account_id', '=', account.id).execute();
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(raw);
    expect(t.logLines.join('\n')).not.toContain(raw);
    const email = (await t.db.selectFrom('accounts').select('email').where('id', '=', account.id).executeTakeFirstOrThrow()).email;
    const again = await t.request('POST', `${D}/sign-in`, { body: { email: email.toUpperCase(), password: TEST_PASSWORD } });
    expect(again.status, again.raw).toBe(200);
    const line = String(([again.headers['set-cookie']].flat() as string[]).find((l) => l.startsWith('sightline_session=')));
    expect(line).toMatch(/HttpOnly/);
    expect(line).toMatch(/SameSite=Lax/);
    expect(line).not.toMatch(/Secure/);
    expect(again.body.data[0]).toMatchObject({ account: { id: account.id, email }, csrfToken: expect.any(String) });
  });

  it('answers 401 for a wrong password or an unknown address, with the same message', async () => {
    const account = await createAccount(t);
    await signInAs(t, account.id);
    const email = (await t.db.selectFrom('accounts').select('email').where('id', '=', account.id).executeTakeFirstOrThrow()).email;
    const wrong = await t.request('POST', `${D}/sign-in`, { body: { email, password: 'not the password' } });
    const unknown = await t.request('POST', `${D}/sign-in`, { body: { email: 'nobody@example.com', password: 'not the password' } });
    expectError(wrong, 401, /Wrong e-mail or password/);
    expectError(unknown, 401, /Wrong e-mail or password/);
    expect(wrong.headers['set-cookie']).toBeUndefined();
  });

  it('throttles sign-in per account', async () => {
    const account = await createAccount(t);
    await signInAs(t, account.id); // one attempt
    const email = (await t.db.selectFrom('accounts').select('email').where('id', '=', account.id).executeTakeFirstOrThrow()).email;
    for (let i = 0; i < 2; i++) expectError(await t.request('POST', `${D}/sign-in`, { body: { email, password: 'guess number one' } }), 401);
    const throttled = await t.request('POST', `${D}/sign-in`, { body: { email, password: TEST_PASSWORD } });
    expectError(throttled, 429, /Too many attempts/);
  });

  it('answers 400 naming the field for a malformed body', async () => {
    expectError(await t.request('POST', `${D}/sign-in`, { body: { email: 'a@b.co' } }), 400, /password/);
    expectError(await t.request('POST', `${D}/sign-in`, { body: { email: 'a@b.co', password: 'x', extra: 1 } }), 400, /extra/);
  });

  it('lets a session call the documented routes with the full rights of its account, and refuses it other websites', async () => {
    const owner = await createAccount(t);
    const other = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const foreign = await createWebsite(t, other.token);
    const session = await signInAs(t, owner.id);
    const read = await t.request('GET', `/api/v1/admin/websites/${website.id}`, { headers: { cookie: session.cookie } });
    expect(read.status, read.raw).toBe(200);
    expectError(await t.request('GET', `/api/v1/admin/websites/${foreign.id}`, { headers: { cookie: session.cookie } }), 404);
    const token = await t.request('POST', '/api/v1/admin/access-tokens', {
      headers: session.headers,
      body: { name: 'made in the dashboard', permissions: ['analytics:read'] },
    });
    expect(token.status, token.raw).toBe(200);
  });

  it('refuses a signed-in write without the CSRF token, with a wrong one, or from another origin', async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const session = await signInAs(t, owner.id);
    const body = { name: 'renamed' };
    const url = `/api/v1/admin/websites/${website.id}`;
    expectError(await t.request('PUT', url, { headers: { cookie: session.cookie }, body }), 403, /X-CSRF-Token/);
    expectError(await t.request('PUT', url, { headers: { cookie: session.cookie, 'x-csrf-token': 'forged' }, body }), 403, /X-CSRF-Token/);
    expectError(
      await t.request('PUT', url, { headers: { ...session.headers, origin: 'https://evil.example' }, body }),
      403,
      /Cross-origin/,
    );
    const row = await t.db.selectFrom('websites').select('name').where('id', '=', website.id).executeTakeFirstOrThrow();
    expect(row.name).not.toBe('renamed');
    const allowed = await t.request('PUT', url, { headers: { ...session.headers, origin: t.config.publicUrl }, body });
    expect(allowed.status, allowed.raw).toBe(200);
  });

  it('ignores the cookie when a request carries a token', async () => {
    const owner = await createAccount(t);
    const session = await signInAs(t, owner.id);
    const narrow = await createToken(t, owner, ['analytics:read']);
    const response = await t.request('POST', '/api/v1/admin/websites', {
      token: narrow,
      headers: session.headers,
      body: { domain: 'cookie-ignored.example.com', name: 'x' },
    });
    expectError(response, 403, /websites:write/);
  });

  it('keeps dashboard routes from tokens', async () => {
    const owner = await createAccount(t);
    expectError(await t.request('GET', `${D}/session`, { token: owner.token }), 403, /dashboard/);
    expectError(await t.request('GET', `${D}/sessions`, { token: owner.token }), 403, /dashboard/);
    expectError(await t.request('GET', `${D}/session`, { token: 'dft_not_a_real_token' }), 401);
    expectError(await t.request('GET', `${D}/sessions`), 401);
  });

  it('answers GET /session signed out with an empty list, not a 401, clearing the cookie of an ended session', async () => {
    const signedOut = await t.request('GET', `${D}/session`);
    expect(signedOut.status, signedOut.raw).toBe(200);
    expect(signedOut.body).toEqual({ status: 'success', data: [] });
    expect(signedOut.headers['set-cookie']).toBeUndefined();
    expect(signedOut.headers['cache-control']).toBe('no-store');

    const owner = await createAccount(t);
    const session = await signInAs(t, owner.id);
    expect((await t.request('GET', `${D}/session`, { headers: { cookie: session.cookie } })).body.data).toHaveLength(1);
    expect((await t.request('POST', `${D}/sign-out`, { headers: session.headers, body: {} })).status).toBe(200);
    for (const cookie of [session.cookie, 'sightline_session=garbage']) {
      const ended = await t.request('GET', `${D}/session`, { headers: { cookie } });
      expect(ended.status, ended.raw).toBe(200);
      expect(ended.body).toEqual({ status: 'success', data: [] });
      expect(String(ended.headers['set-cookie'])).toMatch(/^sightline_session=;/);
      // Every other route that needs the session still refuses it.
      expectError(await t.request('GET', `${D}/sessions`, { headers: { cookie } }), 401);
    }
  });

  it('lists sessions, ends one (refused on its next request) and signs out everywhere', async () => {
    const owner = await createAccount(t);
    const first = await signInAs(t, owner.id);
    const second = await signInAs(t, owner.id);
    const listed = await t.request('GET', `${D}/sessions`, { headers: { cookie: first.cookie } });
    expect(listed.status, listed.raw).toBe(200);
    expect(listed.body.data.map((s: any) => s.id).sort()).toEqual([first.sessionId, second.sessionId].sort());
    expect(listed.body.data.find((s: any) => s.id === first.sessionId).current).toBe(true);

    const ended = await t.request('DELETE', `${D}/sessions/${second.sessionId}`, { headers: first.headers });
    expect(ended.status, ended.raw).toBe(200);
    expectError(await t.request('GET', `${D}/sessions`, { headers: { cookie: second.cookie } }), 401, /session has ended/);
    expectError(await t.request('DELETE', `${D}/sessions/${UNKNOWN_ID}`, { headers: first.headers }), 404);

    const other = await createAccount(t);
    const foreign = await signInAs(t, other.id);
    expectError(await t.request('DELETE', `${D}/sessions/${foreign.sessionId}`, { headers: first.headers }), 404);

    const everywhere = await t.request('POST', `${D}/sign-out-everywhere`, { headers: first.headers, body: {} });
    expect(everywhere.status, everywhere.raw).toBe(200);
    expectError(await t.request('GET', `${D}/sessions`, { headers: { cookie: first.cookie } }), 401);
    expect((await t.request('GET', `${D}/session`, { headers: { cookie: foreign.cookie } })).status).toBe(200);
  });

  it('signs out: the cookie is cleared and the session refused afterwards', async () => {
    const owner = await createAccount(t);
    const session = await signInAs(t, owner.id);
    const out = await t.request('POST', `${D}/sign-out`, { headers: session.headers, body: {} });
    expect(out.status, out.raw).toBe(200);
    expect(String(out.headers['set-cookie'])).toMatch(/sightline_session=;/);
    expectError(await t.request('GET', `${D}/sessions`, { headers: { cookie: session.cookie } }), 401);
  });

  it('refuses an expired or idle session', async () => {
    const owner = await createAccount(t);
    const session = await signInAs(t, owner.id);
    await t.db.updateTable('dashboard_sessions').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('id', '=', session.sessionId).execute();
    expectError(await t.request('GET', `${D}/sessions`, { headers: { cookie: session.cookie } }), 401);
    const idle = await signInAs(t, owner.id);
    const longAgo = new Date(Date.now() - 8 * 24 * 3600_000).toISOString();
    await t.db.updateTable('dashboard_sessions').set({ last_seen_at: longAgo }).where('id', '=', idle.sessionId).execute();
    expectError(await t.request('GET', `${D}/sessions`, { headers: { cookie: idle.cookie } }), 401);
    expectError(await t.request('GET', `${D}/sessions`, { headers: { cookie: 'sightline_session=garbage' } }), 401, /malformed/);
  });

  it('changes the password: the old one stops working and other sessions end', async () => {
    const owner = await createAccount(t);
    const current = await signInAs(t, owner.id);
    const other = await signInAs(t, owner.id);
    expectError(
      await t.request('PUT', `${D}/password`, { headers: current.headers, body: { currentPassword: 'wrong one', newPassword: 'a brand new password' } }),
      400,
      /currentPassword/,
    );
    expectError(
      await t.request('PUT', `${D}/password`, { headers: current.headers, body: { currentPassword: TEST_PASSWORD, newPassword: 'short' } }),
      400,
      /newPassword/,
    );
    const changed = await t.request('PUT', `${D}/password`, {
      headers: current.headers,
      body: { currentPassword: TEST_PASSWORD, newPassword: 'a brand new password' },
    });
    expect(changed.status, changed.raw).toBe(200);
    expectError(await t.request('GET', `${D}/sessions`, { headers: { cookie: other.cookie } }), 401);
    expect((await t.request('GET', `${D}/session`, { headers: { cookie: current.cookie } })).status).toBe(200);
    const hash = (await t.db.selectFrom('accounts').select('password_hash').where('id', '=', owner.id).executeTakeFirstOrThrow()).password_hash;
    expect(hash).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(hash).not.toContain('a brand new password');
  });

  it('re-authenticates: a fresh signedInAt for the right password, 400 for a wrong one', async () => {
    const owner = await createAccount(t);
    const session = await signInAs(t, owner.id);
    const before = (await t.request('GET', `${D}/session`, { headers: { cookie: session.cookie } })).body.data[0].signedInAt;
    expectError(await t.request('POST', `${D}/reauthenticate`, { headers: session.headers, body: { password: 'wrong password' } }), 400, /password/);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const again = await t.request('POST', `${D}/reauthenticate`, { headers: session.headers, body: { password: TEST_PASSWORD } });
    expect(again.status, again.raw).toBe(200);
    expect(Date.parse(again.body.data[0].signedInAt)).toBeGreaterThan(Date.parse(before));
  });
});

describeEachEngine('dashboard first-run setup', (engine) => {
  const t = useTestApp(engine);

  it('creates the first account while none exists, then refuses', async () => {
    const state = await t.request('GET', `${D}/setup`);
    expect(state.body.data[0]).toEqual({ setupRequired: true, signUpOpen: false });
    const created = await t.request('POST', `${D}/setup`, { body: { email: 'First@Example.com', name: 'First', password: TEST_PASSWORD } });
    expect(created.status, created.raw).toBe(200);
    expect(created.body.data[0].account.email).toBe('first@example.com');
    const cookie = sessionCookieOf(created.headers['set-cookie']);
    expect((await t.request('GET', `${D}/session`, { headers: { cookie } })).status).toBe(200);
    expect((await t.request('GET', `${D}/setup`)).body.data[0].setupRequired).toBe(false);
    expectError(await t.request('POST', `${D}/setup`, { body: { email: 'second@example.com', name: 'S', password: TEST_PASSWORD } }), 409);
    expectError(await t.request('POST', `${D}/sign-up`, { body: { email: 'second@example.com', name: 'S', password: TEST_PASSWORD } }), 403, /SIGNUP=open/);
  });
});

describeEachEngine('dashboard open sign-up', (engine) => {
  const t = useTestApp(engine, { signup: 'open', publicUrl: 'https://analytics.example.com' });

  it('creates accounts when SIGNUP=open, with a Secure cookie behind https', async () => {
    const created = await t.request('POST', `${D}/sign-up`, { body: { email: 'open@example.com', name: 'Open', password: TEST_PASSWORD } });
    expect(created.status, created.raw).toBe(200);
    expect(String(created.headers['set-cookie'])).toMatch(/Secure/);
    expectError(await t.request('POST', `${D}/sign-up`, { body: { email: 'open@example.com', name: 'Again', password: TEST_PASSWORD } }), 409);
  });
});
