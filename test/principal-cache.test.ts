import SQLite from 'better-sqlite3';
import pg from 'pg';
import { expect, it } from 'vitest';
import { deleteWebsite } from '../src/modules/websites/website-deletion.ts';
import { useTestApp } from './helpers/app.ts';
import { POSTGRES_URL, describeEachEngine } from './helpers/engines.ts';
import { addMember, createAccount, createApiKey, createWebsite, expectError } from './helpers/factories.ts';
import { sleep } from './helpers/processes.ts';

// Authentication keeps what it read for a credential (src/auth/principal-cache.ts). These tests
// warm that cache with several requests, change the credential, and expect the very next request
// to see the change: through the API, through SQL on the app's own connection, and through a
// writer the app does not know (another process on the SQLite file; another client on
// PostgreSQL, heard by notification).

const WARM_UP = 3;

describeEachEngine('principal cache', (engine) => {
  const t = useTestApp(engine);

  async function warm(url: string, token: string): Promise<void> {
    for (let i = 0; i < WARM_UP; i++) expect((await t.request('GET', url, { token })).status).toBe(200);
  }

  /** SQL through a connection of its own: another process on the file, another client of PostgreSQL. */
  async function asAnotherWriter(statement: string, parameters: string[]): Promise<void> {
    if (engine === 'sqlite') {
      const file = t.app.db.sqlitePath!;
      const other = new SQLite(file);
      try {
        other.prepare(statement.replace(/\$\d+/g, '?')).run(...parameters);
      } finally {
        other.close();
      }
      return;
    }
    const client = new pg.Client({ connectionString: POSTGRES_URL, options: `-c search_path=${t.app.db.pgSchema}` });
    await client.connect();
    try {
      await client.query(statement, parameters);
    } finally {
      await client.end();
    }
  }

  /** Requests until `done(status)`, up to `ms`; how long it took. */
  async function until(done: (status: number) => boolean, request: () => Promise<{ status: number }>, ms = 5_000): Promise<number> {
    const started = performance.now();
    while (!done((await request()).status)) {
      if (performance.now() - started > ms) throw new Error(`still not seen after ${ms} ms`);
      await sleep(2);
    }
    return performance.now() - started;
  }

  it('refuses a token revoked through the API on the very next request', async () => {
    const owner = await createAccount(t);
    const created = await t.request('POST', '/api/v1/admin/access-tokens', { token: owner.token, body: { name: 'cached' } });
    const { id, token } = created.body.data[0];
    await warm('/api/v1/admin/account', token);
    expect((await t.request('DELETE', `/api/v1/admin/access-tokens/${id}`, { token: owner.token })).status).toBe(200);
    expectError(await t.request('GET', '/api/v1/admin/account', { token }), 401, /revoked/);
  });

  it('refuses a rolled API key on the very next request, and takes the new one', async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const key = await createApiKey(t, owner.token, website.id);
    await warm(`/api/v1/admin/websites/${website.id}`, key.key);
    const rolled = await t.request('PUT', `/api/v1/admin/websites/${website.id}/apikeys/${key.id}`, { token: owner.token, body: {} });
    expect(rolled.status, rolled.raw).toBe(200);
    expectError(await t.request('GET', `/api/v1/admin/websites/${website.id}`, { token: key.key }), 401, /revoked|unknown/);
    expect((await t.request('GET', `/api/v1/admin/websites/${website.id}`, { token: rolled.body.data[0].key })).status).toBe(200);
  });

  it('sees a role change and a removed member on the very next request', async () => {
    const owner = await createAccount(t);
    const member = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    await addMember(t, website.id, member.id, 'member');
    const settings = `/api/v1/admin/websites/${website.id}`;
    await warm(settings, member.token);
    expect((await t.request('PUT', settings, { token: member.token, body: { name: 'Renamed by a member' } })).status).toBe(200);

    // A viewer may read but not change settings: the cached "member" must not outlive the change.
    await t.db.updateTable('website_members').set({ role: 'viewer' }).where('account_id', '=', member.id).execute();
    expectError(await t.request('PUT', settings, { token: member.token, body: { name: 'Renamed by a viewer' } }), 403, /viewer/);

    const removed = await t.request('DELETE', `/api/v1/admin/websites/${website.id}/team`, { token: owner.token, body: { userId: member.id } });
    expect(removed.status, removed.raw).toBe(200);
    expectError(await t.request('GET', `/api/v1/admin/websites/${website.id}`, { token: member.token }), 404);
  });

  it('lets a new member in on the very next request after a cached refusal', async () => {
    const owner = await createAccount(t);
    const newcomer = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    // The refusal (no role there) is kept with the credential too.
    for (let i = 0; i < WARM_UP; i++) expectError(await t.request('GET', `/api/v1/admin/websites/${website.id}`, { token: newcomer.token }), 404);
    await addMember(t, website.id, newcomer.id, 'viewer');
    expect((await t.request('GET', `/api/v1/admin/websites/${website.id}`, { token: newcomer.token })).status).toBe(200);
  });

  it('does not outlive a revocation made by a writer it does not know', async () => {
    const owner = await createAccount(t);
    const created = await t.request('POST', '/api/v1/admin/access-tokens', { token: owner.token, body: { name: 'outside' } });
    const { id, token } = created.body.data[0];
    await warm('/api/v1/admin/account', token);
    await asAnotherWriter('update access_tokens set revoked_at = $1 where id = $2', [new Date().toISOString(), id]);
    const read = () => t.request('GET', '/api/v1/admin/account', { token });
    if (engine === 'sqlite') {
      // Another process's commit moves the file's data_version, read before every lookup.
      expectError(await read(), 401, /revoked/);
      return;
    }
    // Another client's commit is heard by notification: a bound, measured here.
    const ms = await until((status) => status === 401, read);
    console.log(`principal cache: a revocation by another PostgreSQL client was refused after ${ms.toFixed(1)} ms`);
    expect(ms).toBeLessThan(1_000);
  });

  it("forgets a deleted website's trackingId on the very next request, deleted here or by another writer", async () => {
    const owner = await createAccount(t);
    for (const deleteIt of [
      (id: string) => deleteWebsite(t.db, id),
      (id: string) => asAnotherWriter('delete from websites where id = $1', [id]),
    ]) {
      const website = await createWebsite(t, owner.token);
      const url = `/api/v1/analytics/overview?websiteId=${website.trackingId}`;
      await warm(url, owner.token);
      await deleteIt(website.id);
      expectError(await t.request('GET', url, { token: owner.token }), 404, /Website not found/);
    }
  });

  // PostgreSQL only: the notifications (SQLite's other writers are read from the file each time).
  if (engine === 'postgres') registerNotificationTests();

  function registerNotificationTests(): void {
  it('keeps using what it read while nothing says it changed (the notification is what clears it)', async () => {
    const owner = await createAccount(t);
    const created = await t.request('POST', '/api/v1/admin/access-tokens', { token: owner.token, body: { name: 'quiet' } });
    const { id, token } = created.body.data[0];
    await warm('/api/v1/admin/account', token);
    // Without its trigger, a revocation by another client is not announced: the cached token still
    // answers, which shows the cache is in use; once announced, it is refused.
    await asAnotherWriter('alter table access_tokens disable trigger access_tokens_changed', []);
    try {
      await asAnotherWriter('update access_tokens set revoked_at = $1 where id = $2', [new Date().toISOString(), id]);
      await sleep(200);
      expect((await t.request('GET', '/api/v1/admin/account', { token })).status).toBe(200);
    } finally {
      await asAnotherWriter('alter table access_tokens enable trigger access_tokens_changed', []);
    }
    await asAnotherWriter(`select pg_notify('sightline_credentials', current_schema())`, []);
    const ms = await until((status) => status === 401, () => t.request('GET', '/api/v1/admin/account', { token }));
    expect(ms).toBeLessThan(1_000);
  });

  it('resolves a trackingId from what it read while nothing says it changed', async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const url = `/api/v1/analytics/overview?websiteId=${website.trackingId}`;
    await warm(url, owner.token);
    // A trackingId never changes, so no trigger announces it: a change made behind the app's back
    // is not seen, which shows the id is not read again; a credential change clears it.
    await asAnotherWriter('update websites set tracking_id = $1 where id = $2', [`${website.trackingId}x`, website.id]);
    expect((await t.request('GET', url, { token: owner.token })).status).toBe(200);
    await asAnotherWriter(`select pg_notify('sightline_credentials', current_schema())`, []);
    await until((status) => status === 404, () => t.request('GET', url, { token: owner.token }));
  });

  it('trusts nothing it cached while its notification connection is down', async () => {
    const owner = await createAccount(t);
    const created = await t.request('POST', '/api/v1/admin/access-tokens', { token: owner.token, body: { name: 'deaf' } });
    const { id, token } = created.body.data[0];
    await warm('/api/v1/admin/account', token);
    await asAnotherWriter('alter table access_tokens disable trigger access_tokens_changed', []);
    try {
      // The listening connection is cut; the revocation that follows is not announced either.
      await asAnotherWriter(`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'sightline-listen' and pid <> pg_backend_pid()`, []);
      await asAnotherWriter('update access_tokens set revoked_at = $1 where id = $2', [new Date().toISOString(), id]);
      // Until it listens again the cache is bypassed, and once it does it starts afresh.
      expectError(await t.request('GET', '/api/v1/admin/account', { token }), 401, /revoked/);
      await sleep(1_000);
      expectError(await t.request('GET', '/api/v1/admin/account', { token }), 401, /revoked/);
    } finally {
      await asAnotherWriter('alter table access_tokens enable trigger access_tokens_changed', []);
    }
  });
}
});
