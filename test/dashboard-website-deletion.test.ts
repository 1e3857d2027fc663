import { expect, it } from 'vitest';
import { type TestApp, useTestApp, writeAndDerive } from './helpers/app.ts';
import { TEST_PASSWORD, signInAs } from './helpers/dashboard-session.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { rowsReferencing } from './helpers/website-rows.ts';
import { addMember, createAccount, createApiKey, createWebsite, expectError, newEvent } from './helpers/factories.ts';

// Deleting a website from the dashboard: a signed-in owner who entered the password within the
// last ten minutes and typed the domain again. Afterwards nothing of the website is left in any
// table (read from the database's own catalog), and nothing of the account's other website goes.

const D = '/api/v1/dashboard';
const ADMIN = '/api/v1/admin';


describeEachEngine('deleting a website from the dashboard', (engine) => {
  const t = useTestApp(engine);

  async function ownedWebsite() {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const key = await createApiKey(t, owner.token, website.id);
    // Derived at once: a derivation in the background would move the event from rollup_backlog into
    // the rollups between a test's two snapshots (seen on PostgreSQL in a full run).
    await writeAndDerive(t, [newEvent(website.id, 'visitor-1')]);
    const note = await t.request('POST', `${ADMIN}/websites/${website.id}/notes`, { token: owner.token, body: { text: 'Launch' } });
    expect(note.status, note.raw).toBe(200);
    return { owner, website, key, session: await signInAs(t, owner.id) };
  }

  const remove = (t: TestApp, websiteId: string, headers: Record<string, string>, confirmDomain: string, token?: string) =>
    t.request('DELETE', `${D}/websites/${websiteId}`, { headers, token, body: { confirmDomain } });

  it('deletes the website and everything it holds, and nothing of the same owner’s other website', async () => {
    const { owner, website, key, session } = await ownedWebsite();
    const kept = await createWebsite(t, owner.token);
    // Derived before the snapshot: a derivation after the answer would otherwise move the event
    // from rollup_backlog into the rollups between the two reads (seen once on PostgreSQL in CI).
    await writeAndDerive(t, [newEvent(kept.id, 'visitor-1')]);
    const keptBefore = await rowsReferencing(t.db, kept.id);
    const before = await rowsReferencing(t.db, website.id);
    expect(before).toMatchObject({ websites: 1, events: 1, api_keys: 1, notes: 1, website_members: 1 });

    const deleted = await remove(t, website.id, session.headers, website.domain.toUpperCase());
    expect(deleted.status, deleted.raw).toBe(200);
    expect(deleted.body.data[0].message).toContain(website.domain);

    expect(await rowsReferencing(t.db, website.id)).toEqual({});
    expect(await rowsReferencing(t.db, kept.id)).toEqual(keptBefore);
    expectError(await t.request('GET', `${ADMIN}/websites/${website.id}`, { token: owner.token }), 404);
    expectError(await t.request('GET', `${ADMIN}/account`, { token: key.key }), 401);
    expectError(await remove(t, website.id, session.headers, website.domain), 404);
  });

  it('answers 400 naming confirmDomain when it is not the website’s domain, and deletes nothing', async () => {
    const { website, session } = await ownedWebsite();
    const before = await rowsReferencing(t.db, website.id);
    expectError(await remove(t, website.id, session.headers, `other-${website.domain}`), 400, /body\.confirmDomain/);
    expectError(await remove(t, website.id, session.headers, ''), 400, /confirmDomain/);
    expect(await rowsReferencing(t.db, website.id)).toEqual(before);
  });

  it('asks for the password again when the sign-in is older than ten minutes, then deletes', async () => {
    const { website, session } = await ownedWebsite();
    const longAgo = new Date(Date.now() - 11 * 60_000).toISOString();
    await t.db.updateTable('dashboard_sessions').set({ signed_in_at: longAgo }).where('id', '=', session.sessionId).execute();

    const stale = await remove(t, website.id, session.headers, website.domain);
    expectError(stale, 403, /re-authenticate/);
    expect(stale.body.error.message).toMatch(/sign in again/);
    expect(await rowsReferencing(t.db, website.id)).toMatchObject({ websites: 1 });

    const again = await t.request('POST', `${D}/reauthenticate`, { headers: session.headers, body: { password: TEST_PASSWORD } });
    expect(again.status, again.raw).toBe(200);
    const deleted = await remove(t, website.id, session.headers, website.domain);
    expect(deleted.status, deleted.raw).toBe(200);
    expect(await rowsReferencing(t.db, website.id)).toEqual({});
  });

  it('refuses a member and a viewer (403), and another account’s website (404)', async () => {
    const { website } = await ownedWebsite();
    for (const role of ['member', 'viewer'] as const) {
      const teammate = await createAccount(t);
      await addMember(t, website.id, teammate.id, role);
      const session = await signInAs(t, teammate.id);
      expectError(await remove(t, website.id, session.headers, website.domain), 403, new RegExp(`\\(${role}\\) cannot delete this website`));
    }
    const stranger = await createAccount(t);
    const session = await signInAs(t, stranger.id);
    expectError(await remove(t, website.id, session.headers, website.domain), 404);
    expect(await rowsReferencing(t.db, website.id)).toMatchObject({ websites: 1 });
  });

  it('refuses a token (403, the dashboard only), no credential (401) and a write without the CSRF token (403)', async () => {
    const { owner, website, session } = await ownedWebsite();
    expectError(await remove(t, website.id, {}, website.domain, owner.token), 403, /dashboard/);
    // A token wins over the cookie, so a session cannot lend its rights to one.
    expectError(await remove(t, website.id, session.headers, website.domain, owner.token), 403, /dashboard/);
    expectError(await remove(t, website.id, {}, website.domain), 401);
    expectError(await remove(t, website.id, { cookie: session.cookie }, website.domain), 403, /X-CSRF-Token/);
    expectError(await remove(t, website.id, { ...session.headers, origin: 'https://evil.example' }, website.domain), 403, /Cross-origin/);
    expect(await rowsReferencing(t.db, website.id)).toMatchObject({ websites: 1 });
  });

  it('keeps DELETE /api/v1/admin/websites/{id} refused for tokens and sessions alike', async () => {
    const { owner, website, session } = await ownedWebsite();
    expectError(await t.request('DELETE', `${ADMIN}/websites/${website.id}`, { token: owner.token }), 403, /dashboard/);
    expectError(await t.request('DELETE', `${ADMIN}/websites/${website.id}`, { headers: session.headers }), 403, /dashboard/);
    expect(await rowsReferencing(t.db, website.id)).toMatchObject({ websites: 1 });
  });
});
