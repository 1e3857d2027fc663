import { randomBytes, randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { ConfigError, loadConfig } from '../src/config.ts';
import { type Db, createDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { loggerOptions } from '../src/http/logging.ts';
import { pendingOutboxRow } from '../src/mail/outbox-rows.ts';
import { createAccountWithToken } from '../src/modules/account/account.service.ts';
import { TEST_CONFIG_OVERRIDES } from './helpers/app.ts';
import { POSTGRES_URL, asPostgresAdmin, postgresProblem } from './helpers/engines.ts';
import { type Answer, call } from './helpers/listening-sightline.ts';
import { type CliProcess, type EnvValues, Processes, REPO_ROOT, freePort, sleep, waitForHealthy } from './helpers/processes.ts';
import { REDIS_URL, redisProblem, testRedisClient } from './helpers/redis.ts';
import { type SmtpInbox, startSmtpInbox } from './helpers/smtp-inbox.ts';

// Two real `sightline serve` processes, started at the same moment on a fresh PostgreSQL database,
// behave as one installation behind a load balancer: the migrations run once, a rate limit is
// counted once for both (in PostgreSQL, or in Redis with REDIS_URL), every outbox mail is sent
// once, and an alert's cooldown holds whichever instance took the goal events.
//
// Integration jobs across two instances (one runs a job; the other takes it over after a kill -9)
// are tested in integration-jobs-processes.test.ts.

const ADMIN = '/api/v1/admin';
const LIMIT = 20;
const MIGRATIONS = readdirSync(join(REPO_ROOT, 'src/db/migrations'))
  .filter((name) => /^\d{4}-.+\.ts$/.test(name))
  .map((name) => name.replace(/\.ts$/, ''))
  .sort();

async function waitFor(what: string, probe: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** N instances of one installation: a database of their own (DATABASE_URL names no schema). */
class Installation {
  readonly processes = new Processes();
  readonly instances: { process: CliProcess; baseUrl: string }[] = [];
  readonly name = `sl_multi_${randomBytes(6).toString('hex')}`;
  readonly url: string;
  db!: Db;

  constructor() {
    const url = new URL(POSTGRES_URL);
    url.pathname = `/${this.name}`;
    this.url = url.toString();
  }

  /** Creates the database and starts every instance in the same tick: they all find it empty. */
  async start(count: number, env: EnvValues): Promise<void> {
    await asPostgresAdmin(`create database ${this.name}`);
    const ports = await Promise.all(Array.from({ length: count }, () => freePort()));
    const secretKey = randomBytes(32).toString('base64');
    for (const port of ports) {
      const child = this.processes.spawnCommand(process.execPath, [join(REPO_ROOT, 'bin/sightline.js'), 'serve'], {
        DATABASE_URL: this.url,
        HOST: '127.0.0.1',
        PORT: String(port),
        SIGHTLINE_SECRET_KEY: secretKey,
        LOG_LEVEL: 'info',
        GEOIP_DATABASE: 'none',
        RATE_LIMIT_PER_CREDENTIAL: String(LIMIT),
        RATE_LIMIT_WINDOW_SECONDS: '600',
        REDIS_URL: undefined,
        REDIS_KEY_PREFIX: undefined,
        SMTP_URL: undefined,
        ...env,
      });
      this.instances.push({ process: child, baseUrl: `http://127.0.0.1:${port}` });
    }
    await Promise.all(this.instances.map((instance) => waitForHealthy(instance.baseUrl, instance.process, 60_000)));
    this.db = createDatabase(this.url, { pgPoolSize: 2 });
  }

  /** A new account's full-access token: a credential of its own, with a fresh rate-limit budget. */
  async newToken(): Promise<string> {
    const { token } = await createAccountWithToken(this.db.kysely, `multi-${randomBytes(4).toString('hex')}@example.com`, 'Multi');
    return token;
  }

  /** `count` requests at once, alternating between the instances. */
  alternate(count: number, send: (baseUrl: string, index: number) => Promise<Answer>): Promise<Answer[]> {
    return Promise.all(Array.from({ length: count }, (_, i) => send(this.instances[i % this.instances.length]!.baseUrl, i)));
  }

  async stop(): Promise<void> {
    this.processes.killAll();
    await Promise.all(this.instances.map((instance) => instance.process.exited));
    await this.db?.close();
    await asPostgresAdmin(`drop database if exists ${this.name} with (force)`);
  }
}

const statusCounts = (answers: Answer[]) =>
  answers.reduce<Record<number, number>>((counts, answer) => ({ ...counts, [answer.status]: (counts[answer.status] ?? 0) + 1 }), {});

/** 30 reads with one token, all at once, alternating between the instances; then one more on each. */
async function spendOneBudget(installation: Installation): Promise<Answer[]> {
  const token = await installation.newToken();
  const answers = await installation.alternate(30, (baseUrl) => call(baseUrl, 'GET', `${ADMIN}/websites`, { token }));
  expect(statusCounts(answers)).toEqual({ 200: LIMIT, 429: 30 - LIMIT });
  for (const refused of answers.filter((answer) => answer.status === 429)) {
    expect(refused.body.error.message).toMatch(new RegExp(`at most ${LIMIT} requests per 600 s`));
    expect(Number(refused.retryAfter)).toBeGreaterThan(0);
  }
  // Either instance now refuses the credential: neither has a budget of its own left.
  const after = await installation.alternate(2, (baseUrl) => call(baseUrl, 'GET', `${ADMIN}/websites`, { token }));
  expect(after.map((answer) => answer.status)).toEqual([429, 429]);
  return answers;
}

const postgresSkip = postgresProblem ? `PostgreSQL unreachable at ${POSTGRES_URL}: ${postgresProblem}` : null;
const redisSkip = postgresSkip ?? (redisProblem ? `Redis does not answer at ${REDIS_URL}: ${redisProblem}` : null);

/** The suite, or the same suite reported as skipped with its reason. */
function describeUnless(skip: string | null, name: string, suite: () => void): void {
  if (skip) describe.skip(`${name} (skipped: ${skip})`, suite);
  else describe(name, suite);
}

describeUnless(postgresSkip, 'two instances on one PostgreSQL', () => {
  const installation = new Installation();
  let inbox: SmtpInbox;
  const subjects = () => inbox.received.map((mail) => mail.subject);

  beforeAll(async () => {
    inbox = await startSmtpInbox();
    await installation.start(2, { SMTP_URL: inbox.url, ALERT_COOLDOWN_SECONDS: '600' });
  }, 120_000);

  afterAll(async () => {
    await installation.stop();
    await inbox?.close();
  }, 60_000);

  it('runs each migration once when both start together on an empty database, and both serve', async () => {
    const recorded = await installation.db.kysely
      .selectFrom('kysely_migration' as never)
      .select('name' as never)
      .execute();
    expect((recorded as { name: string }[]).map((row) => row.name).sort()).toEqual(MIGRATIONS);
    // Each migration was applied by exactly one of the two processes (the other found it done).
    const applied = installation.instances.flatMap(({ process }) =>
      process.logLines().filter((line) => line.msg === 'database migrated').flatMap((line) => line.migrations as string[]),
    );
    expect(applied.sort()).toEqual(MIGRATIONS);
    for (const { baseUrl } of installation.instances) expect((await call(baseUrl, 'GET', '/healthz')).status).toBe(200);
  });

  it('counts one rate limit for both: 20 of 30 requests alternating between them pass (PostgreSQL store)', async () => {
    await spendOneBudget(installation);
    // The 32 hits are one row of the shared table, keyed by a digest rather than the credential.
    const rows = await installation.db.kysely.selectFrom('rate_limit_counters').select(['key', 'count']).execute();
    expect(rows.filter((row) => row.count === 32)).toHaveLength(1);
    expect(rows.every((row) => /^[A-Za-z0-9_-]{22}$/.test(row.key))).toBe(true);
  });

  it('sends every outbox mail exactly once, whichever instance claims it', async () => {
    const run = randomBytes(4).toString('hex');
    const now = new Date().toISOString();
    const rows = Array.from({ length: 60 }, (_, i) =>
      pendingOutboxRow(
        { websiteId: null, accountId: null, alertHistoryId: null, to: `outbox-${run}@example.com`, subject: `Outbox ${run} #${i}`, text: `Message ${i}` },
        now,
      ),
    );
    // All due at once: both workers find the same rows at their next poll and race for them.
    await installation.db.kysely.insertInto('mail_outbox').values(rows).execute();
    const ids = rows.map((row) => row.id);
    const outbox = () => installation.db.kysely.selectFrom('mail_outbox').select(['status', 'attempts']).where('id', 'in', ids).execute();
    await waitFor('every row sent', async () => (await outbox()).every((row) => row.status === 'sent'));
    await sleep(1500); // more than a poll interval: a second send would have happened by now

    const received = subjects().filter((subject) => subject.startsWith(`Outbox ${run} `));
    expect(received.sort()).toEqual(rows.map((row) => row.subject).sort());
    expect((await outbox()).every((row) => row.attempts === 1)).toBe(true);
    const sentBy = installation.instances.map(
      ({ process }) => process.logLines().filter((line) => line.msg === 'mail outbox: sent' && ids.includes(line.outboxId)).length,
    );
    expect(sentBy[0]! + sentBy[1]!).toBe(rows.length);
  });

  it('refuses a token revoked on one instance on the other too, within a bound it measures', async () => {
    const [first, second] = installation.instances;
    const owner = await installation.newToken();
    const bounds: number[] = [];
    for (let round = 0; round < 3; round++) {
      const created = await call(first!.baseUrl, 'POST', `${ADMIN}/access-tokens`, { token: owner, body: { name: `revoked ${round}` } });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      const { id, token } = created.body.data[0] as { id: string; token: string };
      // Both instances read it and keep it (src/auth/principal-cache.ts).
      for (const { baseUrl } of [first!, second!, second!]) expect((await call(baseUrl, 'GET', `${ADMIN}/account`, { token })).status).toBe(200);

      expect((await call(first!.baseUrl, 'DELETE', `${ADMIN}/access-tokens/${id}`, { token: owner })).status).toBe(200);
      // The instance that revoked it refuses it at once; the other once PostgreSQL's notification arrives.
      expect((await call(first!.baseUrl, 'GET', `${ADMIN}/account`, { token })).status).toBe(401);
      const started = performance.now();
      while ((await call(second!.baseUrl, 'GET', `${ADMIN}/account`, { token })).status !== 401) {
        expect(performance.now() - started, 'the other instance still accepts the revoked token').toBeLessThan(1_000);
      }
      bounds.push(performance.now() - started);
    }
    console.log(`multi-instance: a revoked token was refused by the other instance after ${bounds.map((ms) => ms.toFixed(1)).join(', ')} ms`);
  });

  it('reads events accepted by either instance at once on both, and derives their rollups once', async () => {
    const token = await installation.newToken();
    const [first, second] = installation.instances;
    const domain = `rollups-${randomBytes(4).toString('hex')}.example.com`;
    const created = await call(first!.baseUrl, 'POST', `${ADMIN}/websites`, { token, body: { domain, timezone: 'Europe/Paris', name: 'Rollups' } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const website = created.body.data[0] as { id: string; trackingId: string };
    const visitors = Array.from({ length: 12 }, () => randomUUID());
    // Each visitor's two page views go to both instances, so both derive rollups of one visitor.
    const sent = await installation.alternate(24, (baseUrl, i) =>
      call(baseUrl, 'POST', '/api/events', { body: { websiteId: website.trackingId, domain, href: `https://${domain}/p${i % 3}`, visitorId: visitors[i % 12], type: 'pageview' } }),
    );
    expect(sent.map((answer) => answer.status), JSON.stringify(sent[0]?.body)).toEqual(sent.map(() => 200));
    // At once, before any deriver's delay: each read settles the backlog, whoever accepted the events.
    for (const instance of [second!, first!]) {
      const overview = await call(instance.baseUrl, 'GET', `/api/v1/analytics/overview?websiteId=${website.id}`, { token });
      expect(overview.status, JSON.stringify(overview.body)).toBe(200);
      expect(overview.body.data[0]).toMatchObject({ visitors: 12, pageviews: 24 });
    }
    const pages = await installation.db.kysely.selectFrom('breakdown_totals').select(['key', 'visitors', 'pageviews']).where('website_id', '=', website.id).where('breakdown', '=', 'pages').orderBy('key').execute();
    // A page's key is its host and path; each page has 4 visitors with two views each, counted once.
    expect(pages.map((row) => [JSON.parse(row.key), Number(row.visitors), Number(row.pageviews)])).toEqual([
      [[domain, '/p0'], 4, 8],
      [[domain, '/p1'], 4, 8],
      [[domain, '/p2'], 4, 8],
    ]);
  });

  it('holds an alert cooldown across instances: goal events on both within it queue one mail', async () => {
    const token = await installation.newToken();
    const [first] = installation.instances;
    const domain = `cooldown-${randomBytes(4).toString('hex')}.example.com`;
    const created = await call(first!.baseUrl, 'POST', `${ADMIN}/websites`, { token, body: { domain, timezone: 'Europe/Paris', name: 'Cooldown' } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const website = created.body.data[0] as { id: string; trackingId: string };
    const subject = `Signup on ${domain}`;
    const alert = await call(first!.baseUrl, 'POST', `${ADMIN}/websites/${website.id}/alerts`, {
      token,
      body: { name: 'Signups', trigger: { goalName: 'signup' }, template: { subject: 'Signup on {{website}}', message: '{{visitor}} signed up.' } },
    });
    expect(alert.status, JSON.stringify(alert.body)).toBe(200);

    const goals = await installation.alternate(10, (baseUrl) =>
      call(baseUrl, 'POST', '/api/events', {
        body: {
          websiteId: website.trackingId,
          domain,
          href: `https://${domain}/welcome`,
          visitorId: randomUUID(),
          type: 'custom',
          extraData: { eventName: 'signup' },
        },
      }),
    );
    expect(goals.map((answer) => answer.status)).toEqual(goals.map(() => 200));

    const history = () =>
      installation.db.kysely.selectFrom('alert_history').select('status').where('website_id', '=', website.id).execute();
    await waitFor('ten firings', async () => (await history()).length === 10);
    await waitFor('the mail', () => subjects().includes(subject));
    await sleep(1500);
    const statuses = (await history()).map((row) => row.status).sort();
    expect(statuses).toEqual(['sent', ...Array.from({ length: 9 }, () => 'throttled')]);
    const queued = await installation.db.kysely.selectFrom('mail_outbox').select('id').where('website_id', '=', website.id).execute();
    expect(queued).toHaveLength(1);
    expect(subjects().filter((s) => s === subject)).toHaveLength(1);
  });
});

describeUnless(redisSkip, 'two instances with REDIS_URL', () => {
  const installation = new Installation();
  // A namespace of this run's own, so parallel runs on one Redis never count into each other.
  const prefix = `sightline-test-${randomBytes(6).toString('hex')}:`;
  const redis = testRedisClient();

  beforeAll(async () => {
    await redis.connect();
    await installation.start(2, { REDIS_URL, REDIS_KEY_PREFIX: prefix });
  }, 120_000);

  afterAll(async () => {
    await installation.stop();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  }, 60_000);

  it('counts one rate limit for both through Redis: 20 of 30 requests pass', async () => {
    await spendOneBudget(installation);
    const keys = await redis.keys(`${prefix}*`);
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(new RegExp(`^${prefix}rate-limit:[A-Za-z0-9_-]{22}$`));
    expect(await redis.get(keys[0]!)).toBe('32');
    expect(await redis.pttl(keys[0]!)).toBeGreaterThan(0);
    // PostgreSQL counted nothing: the counters live in Redis alone.
    expect(await installation.db.kysely.selectFrom('rate_limit_counters').select('key').execute()).toEqual([]);
  });
});

describe('a Redis that does not answer', () => {
  it('lets requests through without a limit, and says so once at warn', async () => {
    const port = await freePort(); // nothing listens there
    const db = createDatabase('sqlite::memory:');
    await migrateToLatest(db);
    const lines: string[] = [];
    const config = loadConfig({}, { ...TEST_CONFIG_OVERRIDES, databaseUrl: 'test', redisUrl: `redis://:hunter2-secret@127.0.0.1:${port}` });
    const app = await buildApp({ config, db, logger: loggerOptions('info', { write: (line: string) => lines.push(line) }) });
    try {
      await app.ready();
      const { token } = await createAccountWithToken(db.kysely, 'outage@example.com', 'Outage');
      for (let i = 0; i < 3; i++) {
        const started = Date.now();
        const response = await app.inject({ method: 'GET', url: `${ADMIN}/account`, headers: { authorization: `Bearer ${token}` } });
        expect(response.statusCode, response.body).toBe(200);
        expect(Date.now() - started).toBeLessThan(1000);
      }
      const warnings = lines.map((line) => JSON.parse(line)).filter((line) => /Redis does not answer/.test(line.msg));
      expect(warnings).toHaveLength(1);
      expect(warnings[0].level).toBe(40);
      expect(lines.join('\n')).not.toContain('hunter2-secret');
    } finally {
      await app.close();
      await db.close();
    }
  });
});

describe('REDIS_URL', () => {
  it('takes a redis:// or rediss:// URL, and refuses anything else without repeating it', () => {
    expect(loadConfig({}).redisUrl).toBeUndefined();
    expect(loadConfig({}).redisKeyPrefix).toBe('sightline:');
    expect(loadConfig({ REDIS_URL: 'redis://:pw@cache:6379/2' }).redisUrl).toBe('redis://:pw@cache:6379/2');
    expect(loadConfig({ REDIS_URL: 'rediss://cache.example.com' }).redisUrl).toBe('rediss://cache.example.com');
    for (const wrong of ['http://:secret-pw@cache:6379', 'cache:6379', 'redis://', 'secret-pw']) {
      let message = '';
      try {
        loadConfig({ REDIS_URL: wrong });
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        message = (error as Error).message;
      }
      expect(message).toMatch(/^REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL/);
      expect(message).not.toContain('secret-pw');
    }
    expect(() => loadConfig({ REDIS_KEY_PREFIX: 'two words' })).toThrow(/REDIS_KEY_PREFIX/);
  });
});
