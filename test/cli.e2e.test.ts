import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { type Socket, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../src/db/database.ts';
import { POSTGRES_URL, postgresProblem } from './helpers/engines.ts';
import { type CliProcess, type CliResult, Processes, REPO_ROOT, freePort, sleep, waitForHealthy } from './helpers/processes.ts';

// The real process, started the way the README tells a new user to start it: `npx sightline ...`
// in a checkout, configured by environment variables only, on a database nobody has touched.

const TIMEOUT = { timeout: 90_000 };
const TOKEN_PATTERN = /^dft_[0-9A-Za-z]{36}$/;

/** Every migration file, by name: a fresh database must get all of them. */
const MIGRATIONS = readdirSync(join(REPO_ROOT, 'src/db/migrations'))
  .filter((file) => /^\d{4}-.+\.ts$/.test(file))
  .map((file) => file.replace(/\.ts$/, ''))
  .sort();

/** Fresh, empty databases for one engine, and their removal. */
interface Databases {
  create(): Promise<string>;
  dropAll(): Promise<void>;
}

function sqliteDatabases(): Databases {
  const dir = mkdtempSync(join(tmpdir(), 'sightline-e2e-'));
  let count = 0;
  return {
    create: async () => `sqlite:${join(dir, `x${++count}.db`)}`,
    dropAll: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

// DATABASE_URL cannot name a schema, so each PostgreSQL run gets a whole database of its own.
// PostgreSQL has no data directory to keep a generated key in, so the user sets one.
const POSTGRES_ENV = { SIGHTLINE_SECRET_KEY: randomBytes(32).toString('base64') };

function postgresDatabases(): Databases {
  const names: string[] = [];
  const asAdmin = async (sql: string) => {
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  return {
    async create() {
      const name = `sl_e2e_${randomBytes(6).toString('hex')}`;
      await asAdmin(`create database ${name}`);
      names.push(name);
      const url = new URL(POSTGRES_URL);
      url.pathname = `/${name}`;
      return url.toString();
    },
    async dropAll() {
      for (const name of names.splice(0)) await asAdmin(`drop database if exists ${name} with (force)`);
    },
  };
}

/** Reads the database the CLI wrote, as a check from outside the process. */
async function inspect<T>(databaseUrl: string, read: (db: ReturnType<typeof createDatabase>['kysely']) => Promise<T>): Promise<T> {
  const db = createDatabase(databaseUrl);
  try {
    return await read(db.kysely);
  } finally {
    await db.close();
  }
}

async function countAccounts(databaseUrl: string, email?: string): Promise<number> {
  return inspect(databaseUrl, async (db) => {
    let query = db.selectFrom('accounts').select((eb) => eb.fn.countAll<string | number>().as('n'));
    if (email) query = query.where('email', '=', email);
    return Number((await query.executeTakeFirstOrThrow()).n);
  });
}

async function countTokens(databaseUrl: string, accountId: string): Promise<number> {
  return inspect(databaseUrl, async (db) => {
    const row = await db
      .selectFrom('access_tokens')
      .where('account_id', '=', accountId)
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  });
}

function expectExit(result: CliResult, code: number) {
  expect(result.code, `exit code\n--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`).toBe(code);
}

/** Starts `npx sightline serve` on a free port and waits until /healthz answers. */
async function serve(processes: Processes, env: Record<string, string>) {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const server = processes.spawn(['serve'], { ...env, HOST: '127.0.0.1', PORT: String(port) });
  await waitForHealthy(baseUrl, server);
  return { server, port, baseUrl };
}

/** Sends an HTTP request on a raw socket, so the test decides when the last bytes of the body go out. */
function rawRequest(port: number) {
  const socket: Socket = connect(port, '127.0.0.1');
  const response = new Promise<{ status: number; body: any }>((resolve, reject) => {
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.once('error', reject);
    socket.once('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
      const rawBody = text.slice(text.indexOf('\r\n\r\n') + 4);
      try {
        resolve({ status, body: JSON.parse(rawBody) });
      } catch {
        reject(new Error(`not a JSON response:\n${text}`));
      }
    });
  });
  response.catch(() => {});
  return { socket, response };
}

/** Resolves once a new connection to the port is refused: the server has stopped accepting. */
async function waitUntilRefused(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const refused = await new Promise<boolean>((resolve) => {
      const probe = connect(port, '127.0.0.1');
      probe.once('connect', () => {
        probe.destroy();
        resolve(false);
      });
      probe.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
    });
    if (refused) return;
    await sleep(25);
  }
  throw new Error(`port ${port} still accepts connections after ${timeoutMs} ms`);
}

describe('npx sightline', TIMEOUT, () => {
  const processes = new Processes();
  afterAll(() => processes.killAll());

  it('--help exits 0 and lists the serve, migrate and admin commands', async () => {
    const result = await processes.run(['--help'], {});
    expectExit(result, 0);
    expect(result.stdout).toMatch(/^Usage: sightline /m);
    for (const command of ['serve', 'migrate', 'admin']) expect(result.stdout).toMatch(new RegExp(`^ {2}${command}\\s`, 'm'));
  });

  it('exits 2 with a usage message when create-account misses --email', async () => {
    const result = await processes.run(['admin', 'create-account', '--name', 'No Email'], {
      DATABASE_URL: `sqlite:${join(tmpdir(), `sightline-e2e-never-${randomBytes(4).toString('hex')}.db`)}`,
    });
    expect(result.stderr).toMatch(/--email/);
    expect(result.stdout).toBe('');
    expectExit(result, 2);
  });
});

function newUserSuite(databases: () => Databases, extraEnv: Record<string, string> = {}) {
  const env = (databaseUrl: string) => ({ ...extraEnv, DATABASE_URL: databaseUrl });
  const processes = new Processes();
  let dbs: Databases;
  let databaseUrl: string;
  const email = `new-user-${randomBytes(4).toString('hex')}@example.com`;
  let created: CliResult;
  let account: { id: string; email: string; name: string };
  let token: string;

  beforeAll(async () => {
    dbs = databases();
    databaseUrl = await dbs.create();
    created = await processes.run(
      ['admin', 'create-account', '--email', email, '--name', 'New User', '--json'],
      env(databaseUrl),
    );
    if (created.code === 0) ({ account, token } = JSON.parse(created.stdout));
  });

  afterAll(async () => {
    processes.killAll();
    await dbs?.dropAll();
  });

  it('migrate on a fresh database prints every migration it applied and exits 0', async () => {
    const fresh = await dbs.create();
    const first = await processes.run(['migrate'], env(fresh));
    expectExit(first, 0);
    expect(first.stdout.trim()).toBe(`applied: ${MIGRATIONS.join(', ')}`);
    expect(await countAccounts(fresh)).toBe(0);

    const again = await processes.run(['migrate'], env(fresh));
    expectExit(again, 0);
    expect(again.stdout.trim()).toBe('already up to date');
  });

  it('admin create-account --json prints exactly one JSON object: the account and a full-access token', async () => {
    expectExit(created, 0);
    const lines = created.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const output = JSON.parse(lines[0]!);
    expect(Object.keys(output).sort()).toEqual(['account', 'token']);
    expect(output.account).toEqual({ id: expect.stringMatching(/^[0-9a-f]{24}$/), email, name: 'New User' });
    expect(output.token).toMatch(TOKEN_PATTERN);
    expect(await countAccounts(databaseUrl, email)).toBe(1);
    expect(await countTokens(databaseUrl, output.account.id)).toBe(1);
  });

  it('admin create-account with an e-mail that already exists exits 1, says so on stderr and creates nothing', async () => {
    const again = await processes.run(
      ['admin', 'create-account', '--email', email.toUpperCase(), '--name', 'Twin', '--json'],
      env(databaseUrl),
    );
    expectExit(again, 1);
    expect(again.stdout).toBe('');
    expect(again.stderr).toContain(`An account with the email ${email} already exists`);
    expect(await countAccounts(databaseUrl)).toBe(1);
    expect(await countTokens(databaseUrl, account.id)).toBe(1);
  });

  it('admin create-account with a malformed e-mail exits 2 and names the value', async () => {
    const bad = await processes.run(
      ['admin', 'create-account', '--email', 'not-an-email', '--name', 'Nobody', '--json'],
      env(databaseUrl),
    );
    expectExit(bad, 2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(/"not-an-email" is not a valid e-mail address/);
    expect(await countAccounts(databaseUrl)).toBe(1);
  });

  describe('serve, once an account exists', () => {
    let server: CliProcess;
    let port: number;
    let baseUrl: string;

    beforeAll(async () => {
      ({ server, port, baseUrl } = await serve(processes, env(databaseUrl)));
    });

    it('answers GET /healthz', async () => {
      const response = await fetch(`${baseUrl}/healthz`);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ status: 'success', data: [{ ok: true }] });
    });

    it('answers GET /api/v1/admin/account with the token create-account printed', async () => {
      const response = await fetch(`${baseUrl}/api/v1/admin/account`, { headers: { authorization: `Bearer ${token}` } });
      expect(response.status).toBe(200);
      const body = await response.json();
      expect(body.status).toBe('success');
      expect(body.data).toHaveLength(1);
      expect(body.data[0]).toMatchObject({ id: account.id, email, name: 'New User' });
    });

    it('answers 401 without the token', async () => {
      const response = await fetch(`${baseUrl}/api/v1/admin/account`);
      expect(response.status).toBe(401);
      expect((await response.json()).error.code).toBe(401);
    });

    it('does not print the first-start hint, and never logs the token', async () => {
      expect(server.logLines().length).toBeGreaterThan(0);
      expect(server.stdout).not.toContain('create-account');
      expect(server.stdout + server.stderr).not.toContain(token);
    });

    it('on SIGTERM stops accepting, finishes the request in flight with 200, then exits 0', async () => {
      const { pid } = await server.waitForLog((line) => String(line.msg).startsWith('Server listening'));
      const body = JSON.stringify({ name: 'Renamed While Stopping' });
      const { socket, response } = rawRequest(port);
      socket.write(
        'PUT /api/v1/admin/account HTTP/1.1\r\n' +
          `Host: 127.0.0.1:${port}\r\n` +
          `Authorization: Bearer ${token}\r\n` +
          'Content-Type: application/json\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\n` +
          'Connection: close\r\n\r\n' +
          body.slice(0, 5),
      );
      // The request is in flight once the server has logged it; the rest of its body is still to come.
      await server.waitForLog((line) => line.msg === 'incoming request' && line.req?.method === 'PUT');

      // The server process itself (npm's `sh -c` wrapper does not pass SIGTERM on to it).
      process.kill(pid, 'SIGTERM');
      await server.waitForLog((line) => String(line.msg).includes('shutting down'));
      await waitUntilRefused(port);
      expect(server.exit).toBeNull();

      socket.write(body.slice(5));
      const answer = await response;
      expect(answer.status).toBe(200);
      expect(answer.body.data[0]).toMatchObject({ id: account.id, name: 'Renamed While Stopping' });
      expect(await server.exited).toEqual({ code: 0, signal: null });
      const stored = await inspect(databaseUrl, (db) =>
        db.selectFrom('accounts').where('id', '=', account.id).select('name').executeTakeFirstOrThrow(),
      );
      expect(stored.name).toBe('Renamed While Stopping');
    });
  });

  describe('serve, on a database without an account', () => {
    let server: CliProcess;
    let baseUrl: string;
    let freshUrl: string;

    beforeAll(async () => {
      freshUrl = await dbs.create();
      ({ server, baseUrl } = await serve(processes, env(freshUrl)));
    });

    it('says in its log the exact command that creates the first account, and that command works', async () => {
      // Logged right after the server starts listening, so it may come just after /healthz answers.
      const hint = await server.waitForLog((line) => String(line.msg).includes('create-account'), 15_000);
      expect(hint, server.describe()).toBeDefined();
      const command = /(npx sightline admin create-account .*)$/.exec(String(hint!.msg))?.[1];
      expect(command).toMatch(/^npx sightline admin create-account --email \S+@\S+ --name ("[^"]+"|\S+)$/);

      // Pasted into a shell as is, beside the running server (same DATABASE_URL, same PUBLIC_URL).
      const pasted = await processes.runShell(command!, { ...env(freshUrl), PUBLIC_URL: baseUrl });
      expectExit(pasted, 0);
      const printed = /dft_[0-9A-Za-z]{36}/.exec(pasted.stdout)?.[0];
      expect(printed, pasted.stdout).toBeDefined();
      const response = await fetch(`${baseUrl}/api/v1/admin/account`, { headers: { authorization: `Bearer ${printed}` } });
      expect(response.status).toBe(200);
      expect(await countAccounts(freshUrl)).toBe(1);
    });

    it("create-account's human output shows a curl line for this server's PUBLIC_URL", async () => {
      const second = `second-${randomBytes(4).toString('hex')}@example.com`;
      const result = await processes.run(['admin', 'create-account', '--email', second, '--name', 'Second'], {
        ...env(freshUrl),
        PUBLIC_URL: baseUrl,
      });
      expectExit(result, 0);
      expect(result.stdout).toContain(`${baseUrl}/api/v1/admin/account`);
    });
  });
}

describe('a new user on SQLite', TIMEOUT, () => newUserSuite(sqliteDatabases));

if (postgresProblem) {
  describe.skip(`a new user on PostgreSQL (skipped: PostgreSQL unreachable at ${POSTGRES_URL}: ${postgresProblem})`, () =>
    newUserSuite(postgresDatabases, POSTGRES_ENV),
  );
} else {
  describe('a new user on PostgreSQL', TIMEOUT, () => newUserSuite(postgresDatabases, POSTGRES_ENV));
}
