import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCredential } from '../src/auth/tokens.ts';
import { isDatabaseUnavailable } from '../src/db/faults.ts';
import { POSTGRES_URL, postgresProblem } from './helpers/engines.ts';
import { type CliProcess, Processes, freePort, sleep, waitForHealthy } from './helpers/processes.ts';
import {
  type Answer,
  Sightline,
  type Site,
  adminRead,
  adminWrite,
  call,
  expectUnavailable,
  ingest,
  startBehindProxy,
} from './helpers/listening-sightline.ts';

// The database goes away (a restart, a failover, a pooler closing idle connections, a network
// cut) while Sightline runs: the process stays up, requests meanwhile answer 503 with Retry-After
// in the envelope (never 500, never a hang), no acknowledged write is lost or applied twice, and
// the very next requests after the database is back succeed, with no restart of Sightline.

/** What a database restart or a pooler timeout does to the server's connections. */
async function terminateBackends(admin: pg.Client, where: string, value: string, wait = true): Promise<number> {
  const { rows } = await admin.query(
    `select pg_terminate_backend(pid${wait ? ', 5000' : ''}) as done from pg_stat_activity where ${where} = $1 and pid <> pg_backend_pid()`,
    [value],
  );
  return rows.filter((row) => row.done).length;
}

describe.skipIf(postgresProblem)('database faults on PostgreSQL', () => {
  const schema = `sl_faults_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  const sightline = new Sightline();

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    await sightline.start(POSTGRES_URL, schema);
  });

  afterAll(async () => {
    await sightline.stop();
    await admin.query(`drop schema if exists ${schema} cascade`);
    await admin.end();
  });

  it('(a) keeps running after its idle connections are terminated, and the very next requests succeed', async () => {
    const s = sightline.site;
    // Several idle connections in the pool, so the next requests would be handed dead ones.
    await Promise.all([adminRead(s), adminRead(s), adminWrite(s), ingest(s), adminRead(s)]);
    expect(await terminateBackends(admin, 'application_name', sightline.applicationName)).toBeGreaterThan(0);

    for (const request of [adminRead, adminWrite, ingest]) {
      const answer = await request(s);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    }
    // Logged as a warning, without the connection string.
    const lost = sightline.logLines.filter((line) => line.includes('database connection lost'));
    expect(lost.length).toBeGreaterThan(0);
    for (const line of lost) expect(JSON.parse(line).level).toBe(40);
  });

  it('(b) under load while backends are terminated again and again: only 200 or 503, and every 200 is stored', async () => {
    const s = sightline.site;
    const answers: Answer[] = [];
    const acknowledgedEvents: string[] = [];
    const acknowledgedWebsites: string[] = [];
    let running = true;

    const terminator = (async () => {
      while (running) {
        await terminateBackends(admin, 'application_name', sightline.applicationName, false);
        await sleep(120);
      }
    })();
    const worker = async (send: (s: Site) => Promise<Answer>, keep: (answer: Answer) => void) => {
      while (running) {
        const answer = await send(s);
        answers.push(answer);
        if (answer.status === 200) keep(answer);
      }
    };
    const workers = [
      ...Array.from({ length: 4 }, () => worker(ingest, (a) => acknowledgedEvents.push(a.body.eventId))),
      ...Array.from({ length: 2 }, () => worker(adminWrite, (a) => acknowledgedWebsites.push(a.body.data[0].id))),
      worker(adminRead, () => {}),
    ];
    await sleep(4000);
    running = false;
    await Promise.all([terminator, ...workers]);

    const unexpected = answers.filter((a) => a.status !== 200 && a.status !== 503);
    expect(unexpected.map((a) => `${a.status} ${JSON.stringify(a.body)}`)).toEqual([]);
    for (const answer of answers.filter((a) => a.status === 503)) expectUnavailable(answer);
    expect(acknowledgedEvents.length).toBeGreaterThan(0);

    const stored = async (table: string, ids: string[]) =>
      (await admin.query(`select id from ${schema}.${table} where id = any($1)`, [ids])).rows.map((row) => row.id).sort();
    expect(await stored('events', acknowledgedEvents)).toEqual([...acknowledgedEvents].sort());
    expect(await stored('websites', acknowledgedWebsites)).toEqual([...acknowledgedWebsites].sort());

    for (const request of [adminRead, adminWrite, ingest]) expect((await request(s)).status).toBe(200);
  }, 60_000);

  it('(c) answers 503 with Retry-After while the database is cut off, and serves again once it is back', async () => {
    // With alert e-mail on, so the outbox worker polls the database throughout the outage.
    const { proxy, sightline: cutOff } = await startBehindProxy(schema, { smtpUrl: 'smtp://127.0.0.1:9' });
    try {
      const s = cutOff.site;
      expect((await call(s.baseUrl, 'GET', '/readyz')).status).toBe(200);

      await proxy.cut();
      for (const request of [adminRead, adminWrite, ingest]) {
        const answer = await request(s);
        expectUnavailable(answer);
        expect(answer.ms).toBeLessThan(7000);
      }
      const ready = await call(s.baseUrl, 'GET', '/readyz');
      expectUnavailable(ready);
      expect(ready.ms).toBeLessThan(4000);
      expect((await call(s.baseUrl, 'GET', '/healthz')).status).toBe(200);
      await sleep(2500); // a few polls of the outbox worker

      await proxy.restore();
      for (const request of [adminRead, adminWrite, ingest]) {
        const answer = await request(s);
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      }
      expect((await call(s.baseUrl, 'GET', '/readyz')).status).toBe(200);

      // One warning per refused request, no stack trace; the probes are not logged at info.
      const logged = cutOff.logLines.map((line) => JSON.parse(line));
      const refusals = logged.filter((line) => line.res?.statusCode === undefined && line.code === 503);
      expect(refusals.length).toBeGreaterThan(0);
      for (const line of refusals) {
        expect(line.level).toBe(40);
        expect(JSON.stringify(line)).not.toContain('"stack"');
      }
      expect(logged.filter((line) => line.level <= 30 && /\/(healthz|readyz)/.test(line.req?.url ?? ''))).toEqual([]);
      // The outbox worker lived through it and said so once, as a warning; nothing logged an error.
      expect(logged.filter((line) => /mail outbox: database unavailable/.test(line.msg)).map((line) => line.level)).toEqual([40]);
      expect(logged.filter((line) => line.level >= 50).map((line) => line.msg)).toEqual([]);
    } finally {
      await cutOff.stop();
      await proxy.close();
    }
  }, 60_000);

  it('(e) loses no request to connections that died unnoticed (half-open, as after a failover)', async () => {
    const { proxy, sightline: severed } = await startBehindProxy(schema);
    try {
      const s = severed.site;
      const idleConnections = async () => {
        await Promise.all([adminRead(s), adminRead(s), adminWrite(s), ingest(s), adminRead(s), adminRead(s)]);
        // The ingested event's rollups are derived after the answer: done before the pool's
        // connections are severed, so none is in the middle of a statement (that is case (f)).
        await severed.app!.rollups?.settle();
      };
      await idleConnections();
      // The pool still holds these connections as healthy; each first statement on one fails.
      proxy.severSilently();
      for (const request of [adminRead, adminWrite, ingest]) {
        const answer = await request(s);
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      }

      // An autocommit write (no transaction) on such a connection: done once, not refused.
      await idleConnections();
      proxy.severSilently();
      const name = `renamed-${randomBytes(3).toString('hex')}`;
      await Promise.all(
        [1, 2, 3].map(() =>
          severed.db.kysely.insertInto('daily_salts').values({ day: `${name}-${randomUUID()}`, salt: name }).execute(),
        ),
      );
      const { rows } = await admin.query(`select count(*)::int as n from ${schema}.daily_salts where salt = $1`, [name]);
      expect(rows[0].n).toBe(3);
    } finally {
      await severed.stop();
      await proxy.close();
    }
  });

  it('(f) gives up connections on which the server stopped answering (a blackholed failover), without a restart', async () => {
    const { proxy, sightline: stalled } = await startBehindProxy(schema, { databaseQueryTimeoutMs: 800 });
    try {
      const s = stalled.site;
      await Promise.all([adminRead(s), adminRead(s), adminWrite(s), ingest(s), adminRead(s), adminRead(s)]);

      // Only the open connections went silent; new ones work: the requests are served on them.
      proxy.stall();
      for (const request of [adminRead, adminWrite, ingest]) {
        const answer = await request(s);
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
        expect(answer.ms).toBeLessThan(10_000);
      }

      // Everything went silent, new connections included: 503 within the limits, never a hang.
      proxy.stall({ newConnectionsToo: true });
      for (const request of [adminRead, adminWrite, ingest]) {
        const answer = await request(s);
        expectUnavailable(answer);
        expect(answer.ms).toBeLessThan(12_000);
      }

      proxy.unstall();
      for (const request of [adminRead, adminWrite, ingest]) {
        const answer = await request(s);
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      }
    } finally {
      await stalled.stop();
      await proxy.close();
    }
  }, 90_000);

  describe('(d) the real process', () => {
    const processes = new Processes();
    const database = `sl_faults_${randomBytes(6).toString('hex')}`;
    let server: CliProcess;
    let baseUrl: string;

    beforeAll(async () => {
      await admin.query(`create database ${database}`);
      const url = new URL(POSTGRES_URL);
      url.pathname = `/${database}`;
      const port = await freePort();
      baseUrl = `http://127.0.0.1:${port}`;
      server = processes.spawn(['serve'], {
        DATABASE_URL: url.toString(),
        HOST: '127.0.0.1',
        PORT: String(port),
        SIGHTLINE_SECRET_KEY: randomBytes(32).toString('base64'),
        LOG_LEVEL: 'info',
      });
      await waitForHealthy(baseUrl, server);
    }, 90_000);

    afterAll(async () => {
      processes.killAll();
      await admin.query(`drop database if exists ${database} with (force)`);
    });

    it('stays alive after pg_terminate_backend and serves the next requests', async () => {
      // Well formed, so it is looked up: the lookup leaves an idle connection in the pool.
      const unknownToken = generateCredential('token');
      expect((await call(baseUrl, 'GET', '/api/v1/admin/websites', { token: unknownToken })).status).toBe(401);

      expect(await terminateBackends(admin, 'datname', database)).toBeGreaterThan(0);
      await sleep(500);

      expect(server.exit, server.describe()).toBeNull();
      expect((await call(baseUrl, 'GET', '/api/v1/admin/websites', { token: unknownToken })).status).toBe(401);
      expect((await call(baseUrl, 'GET', '/readyz')).status).toBe(200);
      expect(server.exit, server.describe()).toBeNull();
    });
  });
});

describe('database faults on SQLite', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sightline-faults-'));
  const sightline = new Sightline();

  beforeAll(async () => {
    await sightline.start(`sqlite:${join(dir, 'faults.db')}`);
  });

  afterAll(async () => {
    await sightline.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 with Retry-After when another process holds the write lock past the busy timeout', async () => {
    const s = sightline.site;
    const holder = new SQLite(join(dir, 'faults.db'));
    holder.exec('begin immediate');
    try {
      const [write, event] = await Promise.all([adminWrite(s), ingest(s)]);
      expectUnavailable(write);
      expectUnavailable(event);
      expect((await call(s.baseUrl, 'GET', '/readyz')).status).toBe(200);
    } finally {
      holder.exec('rollback');
      holder.close();
    }
    for (const request of [adminRead, adminWrite, ingest]) expect((await request(s)).status).toBe(200);
  }, 30_000);

  it('/healthz and /readyz answer 200 and stay out of the OpenAPI document', async () => {
    const s = sightline.site;
    expect((await call(s.baseUrl, 'GET', '/healthz')).status).toBe(200);
    expect((await call(s.baseUrl, 'GET', '/readyz')).status).toBe(200);
    const paths = Object.keys((sightline.app as any).swagger().paths ?? {});
    expect(paths.filter((path) => /healthz|readyz/.test(path))).toEqual([]);
  });
});

// The failures the scenarios above cannot stage here (a server in recovery, a full connection
// table, a timeout, a name that stops resolving) as node-postgres and Node report them.
describe('which failures mean the database is unavailable', () => {
  const withCode = (code: string, message = 'failure') => Object.assign(new Error(message), { code });

  it.each([
    ['a connection exception (class 08)', withCode('08006')],
    ['a server starting up or in recovery', withCode('57P03', 'the database system is starting up')],
    ['a server out of connection slots', withCode('53300', 'sorry, too many clients already')],
    ['a crash shutdown', withCode('57P02')],
    ['a connect timeout of the pool', new Error('timeout exceeded when trying to connect')],
    ['a connect timeout of the client', new Error('Connection terminated due to connection timeout')],
    ['a host name that stops resolving', withCode('EAI_AGAIN', 'getaddrinfo EAI_AGAIN postgres')],
    ['every address refused', new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], 'connect failed')],
    ['a SQLite disk failure', withCode('SQLITE_IOERR_WRITE')],
    ['a full SQLite disk', withCode('SQLITE_FULL')],
  ])('%s', (_name, error) => expect(isDatabaseUnavailable(error)).toBe(true));

  it.each([
    ['a unique violation', withCode('23505', 'duplicate key value violates unique constraint')],
    ['a syntax error', withCode('42601')],
    ['a SQLite constraint failure', withCode('SQLITE_CONSTRAINT_FOREIGNKEY')],
    ['a plain bug', new TypeError('Cannot read properties of undefined')],
  ])('not %s', (_name, error) => expect(isDatabaseUnavailable(error)).toBe(false));
});
