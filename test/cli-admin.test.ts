import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROME, pageview } from './helpers/browser-events.ts';
import { HAS_SCRIPT, expectExit, parseJson, useCliHarness } from './helpers/cli-client.ts';
import { POSTGRES_URL, asPostgresAdmin, postgresProblem } from './helpers/engines.ts';
import { type CliProcess, Processes, freePort, sleep, waitForHealthy } from './helpers/processes.ts';

// `sightline admin` as an operator runs it: real processes on a real database file, beside a
// running server (`sightline serve`) where the command must work while the server writes.

// Tables as a 250-column terminal shows them (into a pipe they would be tab-separated values).
process.env.SIGHTLINE_FORCE_TTY = '250';
process.env.TZ = 'UTC';

const TOKEN = /dft_[0-9A-Za-z]{36}/;
const mode = (path: string) => statSync(path).mode & 0o777;

describe('sightline admin on SQLite, beside a running server', { timeout: 120_000 }, () => {
  const cli = useCliHarness();
  const processes = new Processes();
  const dir = mkdtempSync(join(tmpdir(), 'sightline-admin-'));
  const databaseFile = join(dir, 'data', 'sightline.db');
  const env = { DATABASE_URL: `sqlite:${databaseFile}` };
  let server: CliProcess;
  let baseUrl: string;

  const admin = (args: string[], extra: Record<string, string> = {}) => cli.run(['admin', ...args], { env: { ...env, ...extra } });
  const api = async (method: string, path: string, token: string, body?: unknown) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const createAccount = async (email: string) => {
    const created = await admin(['create-account', '--email', email, '--name', `Owner ${email.split('@')[0]}`, '--json']);
    expectExit(created, 0);
    return parseJson(created) as { account: { id: string; email: string }; token: string };
  };
  const createWebsite = async (token: string, domain: string) => {
    const response = await api('POST', '/api/v1/admin/websites', token, { domain, timezone: 'UTC' });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body.data[0] as { id: string; domain: string };
  };

  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    // A fresh start: no data folder, no database, no secret key yet.
    server = processes.spawn(['serve'], { ...env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn' });
    await waitForHealthy(baseUrl, server);
  });

  afterAll(() => {
    processes.killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates the database, its -wal and -shm files and secret.key readable by their owner only (0600)', async () => {
    await createAccount(`modes-${randomBytes(3).toString('hex')}@example.com`);
    for (const file of [databaseFile, `${databaseFile}-wal`, `${databaseFile}-shm`, join(dir, 'data', 'secret.key')]) {
      expect(existsSync(file), file).toBe(true);
      expect(mode(file).toString(8), file).toBe('600');
    }
  });

  it('list-accounts shows every account with its websites and active tokens, as a table and as JSON', async () => {
    const ada = await createAccount(`ada-${randomBytes(3).toString('hex')}@example.com`);
    await createWebsite(ada.token, `ada-${randomBytes(3).toString('hex')}.example.com`);
    await createWebsite(ada.token, `ada-${randomBytes(3).toString('hex')}.example.com`);
    await api('POST', '/api/v1/admin/access-tokens', ada.token, { name: 'second' });

    const json = await admin(['list-accounts', '--json']);
    expectExit(json, 0);
    const listed = (parseJson(json) as any[]).find((account) => account.id === ada.account.id);
    expect(listed).toEqual({
      id: ada.account.id,
      email: ada.account.email,
      name: expect.stringMatching(/^Owner ada-/),
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      websitesOwned: 2,
      activeTokens: 2,
    });

    const table = await admin(['list-accounts']);
    expectExit(table, 0);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID +EMAIL +NAME +CREATED +WEBSITES +TOKENS$/);
    expect(table.stdout).toMatch(new RegExp(`^${ada.account.id} +${ada.account.email} +Owner ada-\\w+ +\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2} +2 +2$`, 'm'));
  });

  it('issue-token prints a new full-access token that works at once; an unknown e-mail exits 1 and says so', async () => {
    const bob = await createAccount(`bob-${randomBytes(3).toString('hex')}@example.com`);
    const issued = await admin(['issue-token', '--email', bob.account.email.toUpperCase()]);
    expectExit(issued, 0);
    const token = TOKEN.exec(issued.stdout)?.[0];
    expect(token, issued.stdout).toBeDefined();
    expect(token).not.toBe(bob.token);
    const account = await api('GET', '/api/v1/admin/account', token!);
    expect(account.status).toBe(200);
    expect(account.body.data[0].id).toBe(bob.account.id);
    const tokens = await api('GET', '/api/v1/admin/access-tokens', token!);
    expect(tokens.body.data.find((t: any) => t.name.startsWith('Recovery token'))).toMatchObject({ permissions: ['*'], websiteIds: [] });

    const json = await admin(['issue-token', '--email', bob.account.email, '--name', 'Laptop', '--json']);
    expectExit(json, 0);
    expect(parseJson(json)).toEqual({ account: { id: bob.account.id, email: bob.account.email, name: expect.any(String) }, token: expect.stringMatching(TOKEN) });

    const unknown = await admin(['issue-token', '--email', 'nobody-here@example.com']);
    expectExit(unknown, 1);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toBe('sightline: no account has the e-mail nobody-here@example.com (see "sightline admin list-accounts")\n');
  });

  it('set-password gives an account a dashboard password that signs in, and ends its sessions; a short one changes nothing', async () => {
    const carol = await createAccount(`carol-${randomBytes(3).toString('hex')}@example.com`);
    const signIn = (password: string) =>
      fetch(`${baseUrl}/api/v1/dashboard/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: carol.account.email, password }),
      });
    expect((await signIn('a password set by the operator')).status).toBe(401);
    const set = await admin(['set-password', '--email', carol.account.email], { SIGHTLINE_PASSWORD: 'a password set by the operator' });
    expectExit(set, 0);
    expect(set.stdout).toContain('Password set for');
    const signedIn = await signIn('a password set by the operator');
    expect(signedIn.status).toBe(200);
    const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
    const session = () => fetch(`${baseUrl}/api/v1/dashboard/sessions`, { headers: { cookie } });
    expect((await session()).status).toBe(200);

    const short = await admin(['set-password', '--email', carol.account.email], { SIGHTLINE_PASSWORD: 'short' });
    expectExit(short, 2);
    expect((await session()).status).toBe(200);
    const again = await admin(['set-password', '--email', carol.account.email], { SIGHTLINE_PASSWORD: 'another operator password' });
    expectExit(again, 0);
    expect((await session()).status).toBe(401);
    expectExit(await admin(['set-password', '--email', 'nobody-here@example.com'], { SIGHTLINE_PASSWORD: 'whatever it is now' }), 1);
  });

  describe('delete-website', () => {
    let first: Awaited<ReturnType<typeof createAccount>>;
    let second: Awaited<ReturnType<typeof createAccount>>;
    const domain = `shared-${randomBytes(3).toString('hex')}.example.com`;
    let firstSite: { id: string };
    let secondSite: { id: string };
    let firstOther: { id: string };
    let firstKey: string;

    beforeAll(async () => {
      first = await createAccount(`first-${randomBytes(3).toString('hex')}@example.com`);
      second = await createAccount(`second-${randomBytes(3).toString('hex')}@example.com`);
      firstSite = await createWebsite(first.token, domain);
      firstOther = await createWebsite(first.token, `other-${randomBytes(3).toString('hex')}.example.com`);
      secondSite = await createWebsite(second.token, domain);
      firstKey = (await api('POST', `/api/v1/admin/websites/${firstSite.id}/apikeys`, first.token, { name: 'server' })).body.data[0].key;
    });

    const exists = async (token: string, websiteId: string) => (await api('GET', `/api/v1/admin/websites/${websiteId}`, token)).status === 200;

    it('refuses without confirmation when there is no terminal, a wrong --confirm, and an ambiguous domain', async () => {
      const ambiguous = await admin(['delete-website', '--domain', domain, '--confirm', domain]);
      expectExit(ambiguous, 2);
      expect(ambiguous.stderr).toContain('add --account');
      expect(ambiguous.stderr).toContain(first.account.email);
      expect(ambiguous.stderr).toContain(second.account.email);

      const unconfirmed = await admin(['delete-website', '--domain', domain, '--account', first.account.email]);
      expectExit(unconfirmed, 2);
      expect(unconfirmed.stderr).toBe(`sightline: there is no terminal to confirm on: add --confirm ${domain} to delete it; nothing was deleted\n`);

      const wrong = await admin(['delete-website', '--domain', domain, '--account', first.account.email, '--confirm', `x${domain}`]);
      expectExit(wrong, 2);
      expect(wrong.stderr).toMatch(/--confirm must repeat the domain exactly/);

      const unknown = await admin(['delete-website', '--domain', 'nowhere.example.com', '--confirm', 'nowhere.example.com']);
      expectExit(unknown, 1);

      expect(await exists(first.token, firstSite.id)).toBe(true);
      expect(await exists(second.token, secondSite.id)).toBe(true);
    });

    it.skipIf(!HAS_SCRIPT)('on a terminal, asks for the domain to be typed and deletes nothing when it does not match', async () => {
      const answered = await cli.runInTerminal(
        ['admin', 'delete-website', '--domain', domain, '--account', first.account.email],
        [{ waitFor: /Type the domain \(.+\) to delete it: /, type: 'example.com' }],
        { env },
      );
      expectExit(answered, 1);
      expect(answered.stdout).toContain('It cannot be undone.');
      expect(answered.stdout).toContain('the domain did not match; nothing was deleted');
      expect(await exists(first.token, firstSite.id)).toBe(true);
    });

    it('deletes the website of the named owner when confirmed: its key stops working, the rest stays', async () => {
      expect((await api('GET', '/api/v1/admin/account', firstKey)).status).toBe(200);
      const steps = [{ waitFor: /Type the domain \(.+\) to delete it: /, type: domain }];
      const deleted = HAS_SCRIPT
        ? await cli.runInTerminal(['admin', 'delete-website', '--domain', domain, '--account', first.account.email], steps, { env })
        : await admin(['delete-website', '--domain', domain, '--account', first.account.email, '--confirm', domain]);
      expectExit(deleted, 0);
      expect(deleted.stdout).toContain(`Deleted the website ${domain} (${firstSite.id}) of ${first.account.email}.`);

      expect(await exists(first.token, firstSite.id)).toBe(false);
      expect((await api('GET', '/api/v1/admin/account', firstKey)).status).toBe(401);
      expect(await exists(first.token, firstOther.id)).toBe(true);
      expect(await exists(second.token, secondSite.id)).toBe(true);

      // The domain is no longer ambiguous: --confirm alone is enough for the other owner's website.
      const scripted = await admin(['delete-website', '--domain', domain, '--confirm', domain, '--json']);
      expectExit(scripted, 0);
      expect(parseJson(scripted)).toMatchObject({ websiteId: secondSite.id, domain, ownerEmail: second.account.email });
      expect(await exists(second.token, secondSite.id)).toBe(false);
    });
  });

  describe('rebuild-website', () => {
    it('records a build that the running server finishes in the background, the reads the same after it', async () => {
      const owner = await createAccount(`rebuild-${randomBytes(3).toString('hex')}@example.com`);
      const website = await createWebsite(owner.token, `rebuild-${randomBytes(3).toString('hex')}.example.com`);
      const { trackingId } = (await api('GET', `/api/v1/admin/websites/${website.id}`, owner.token)).body.data[0];
      for (let i = 0; i < 12; i++) {
        const response = await fetch(`${baseUrl}/api/events`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'user-agent': CHROME },
          body: JSON.stringify({ ...pageview({ id: website.id, domain: website.domain, trackingId }), href: `https://${website.domain}/page-${i % 3}` }),
        });
        expect(response.status).toBe(200);
      }
      const read = async () => ({
        overview: (await api('GET', `/api/v1/analytics/overview?websiteId=${website.id}`, owner.token)).body.data,
        pages: (await api('GET', `/api/v1/analytics/pages?websiteId=${website.id}`, owner.token)).body.data,
      });
      const before = await read();
      expect(before.pages).toHaveLength(3);

      const unknown = await admin(['rebuild-website', '--domain', 'nowhere.example.com']);
      expectExit(unknown, 1);
      const recorded = await admin(['rebuild-website', '--domain', website.domain, '--json']);
      expectExit(recorded, 0);
      expect(parseJson(recorded)).toMatchObject({ websiteId: website.id, domain: website.domain, reason: 'rebuild requested by an operator' });

      // The server's worker looks at the table every few seconds; until it is done, the state says so.
      let state = (await api('GET', `/api/v1/admin/websites/${website.id}/derived-data`, owner.token)).body.data[0];
      for (let waited = 0; state.state !== 'ready' && waited < 30_000; waited += 200) {
        expect(state).toMatchObject({ state: 'rebuilding', reason: 'build', detail: 'rebuild requested by an operator' });
        await sleep(200);
        state = (await api('GET', `/api/v1/admin/websites/${website.id}/derived-data`, owner.token)).body.data[0];
      }
      expect(state.state).toBe('ready');
      expect(await read()).toEqual(before);
    });
  });

  describe('backup', () => {
    it('copies the database while the server ingests: the copy passes integrity_check, holds the rows and is 0600', async () => {
      const owner = await createAccount(`backup-${randomBytes(3).toString('hex')}@example.com`);
      const website = await createWebsite(owner.token, `backup-${randomBytes(3).toString('hex')}.example.com`);
      const key = (await api('POST', `/api/v1/admin/websites/${website.id}/apikeys`, owner.token, { name: 'ingest' })).body.data[0].key;

      // Payments written one after another, each acknowledged, until told to stop.
      let acknowledged = 0;
      let writing = true;
      const writer = (async () => {
        for (let i = 0; writing; i++) {
          const response = await api('POST', '/api/v1/payments', key, { amount: 1, currency: 'USD', transaction_id: `tx-${i}` });
          expect(response.status, JSON.stringify(response.body)).toBe(200);
          acknowledged++;
        }
      })();
      while (acknowledged < 20) await sleep(10);

      mkdirSync(join(dir, 'backups'));
      const target = join(dir, 'backups', 'copy.db');
      const before = acknowledged;
      const backup = await admin(['backup', '--to', target]);
      const during = acknowledged - before;
      writing = false;
      await writer;
      expectExit(backup, 0);
      expect(backup.stdout).toMatch(/^Backed up .+ to .+copy\.db \(.+ MB, integrity check ok\)\.\n$/);
      expect(backup.stderr).toContain('secret.key');
      expect(during, 'the server kept acknowledging writes during the backup').toBeGreaterThan(0);

      expect(mode(target).toString(8)).toBe('600');
      const copy = new SQLite(target, { readonly: true, fileMustExist: true });
      try {
        expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
        const rows = copy.prepare('select count(*) as n from payments where website_id = ?').get(website.id) as { n: number };
        expect(rows.n).toBeGreaterThanOrEqual(before);
        expect(rows.n).toBeLessThanOrEqual(acknowledged);
        expect(copy.prepare('select count(*) as n from accounts where id = ?').get(owner.account.id)).toEqual({ n: 1 });
      } finally {
        copy.close();
      }
    });

    it('refuses to overwrite a file unless --force', async () => {
      const target = join(dir, 'existing.db');
      writeFileSync(target, 'precious');
      const refused = await admin(['backup', '--to', target]);
      expectExit(refused, 1);
      expect(refused.stderr).toBe(`sightline: ${target} exists: add --force to replace it\n`);
      expect(statSync(target).size).toBe('precious'.length);

      const forced = await admin(['backup', '--to', target, '--force']);
      expectExit(forced, 0);
      expect(mode(target).toString(8)).toBe('600');
      const copy = new SQLite(target, { readonly: true, fileMustExist: true });
      expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
      copy.close();
    });
  });
});

describe.skipIf(Boolean(postgresProblem))('sightline admin on PostgreSQL', { timeout: 60_000 }, () => {
  const cli = useCliHarness();
  // DATABASE_URL cannot name a schema, so the suite gets a database of its own.
  const name = `sl_admin_${randomBytes(6).toString('hex')}`;
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  const env = { DATABASE_URL: url.toString(), SIGHTLINE_SECRET_KEY: randomBytes(32).toString('base64') };
  beforeAll(() => asPostgresAdmin(`create database ${name}`));
  afterAll(() => asPostgresAdmin(`drop database if exists ${name} with (force)`));

  it('backup exits 2 with one line that points at pg_dump, and writes nothing', async () => {
    const target = join(tmpdir(), `sightline-never-${randomBytes(4).toString('hex')}.db`);
    const result = await cli.run(['admin', 'backup', '--to', target], { env });
    expectExit(result, 2);
    expect(result.stderr).toBe('sightline: backup copies SQLite databases only; on PostgreSQL use pg_dump (see the README)\n');
    expect(existsSync(target)).toBe(false);
  });

  it('list-accounts and issue-token work on PostgreSQL; an unknown e-mail exits 1', async () => {
    const email = `pg-${randomBytes(3).toString('hex')}@example.com`;
    expectExit(await cli.run(['admin', 'create-account', '--email', email, '--name', 'Pat'], { env }), 0);
    const issued = await cli.run(['admin', 'issue-token', '--email', email, '--json'], { env });
    expectExit(issued, 0);
    const list = await cli.run(['admin', 'list-accounts', '--json'], { env });
    expectExit(list, 0);
    expect(parseJson(list)).toEqual([expect.objectContaining({ email, websitesOwned: 0, activeTokens: 2 })]);
    const unknown = await cli.run(['admin', 'issue-token', '--email', `nobody-${randomBytes(3).toString('hex')}@example.com`], { env });
    expectExit(unknown, 1);
    expect(unknown.stderr).toMatch(/^sightline: no account has the e-mail nobody-\w+@example\.com/);
  });
});
