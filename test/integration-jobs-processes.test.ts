import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Db, createDatabase } from '../src/db/database.ts';
import { createAccountWithToken } from '../src/modules/account/account.service.ts';
import { type FakeProvider, type RecordedRequest, startFakeProvider } from './integration-adapters/fake-provider.ts';
import { GOOD_KEY, HISTORY_PAGES, HISTORY_PAYMENTS, type StripeHistoryControl, historyPageRead, stripeHistory } from './helpers/fake-stripe-history.ts';
import { POSTGRES_URL, asPostgresAdmin, postgresProblem } from './helpers/engines.ts';
import { call } from './helpers/listening-sightline.ts';
import { type CliProcess, Processes, REPO_ROOT, freePort, sleep, waitForHealthy } from './helpers/processes.ts';

// Two real `sightline serve` processes on one PostgreSQL database and one history import: the job
// runs in one instance only; that instance is killed with SIGKILL while it waits for the second
// page, and the other one takes the job over once the lease has run out, going on from the last
// committed page, so no page is recorded twice and every payment is recorded once. Then the
// survivor gets SIGTERM while waiting for a page: it hands the job back and exits 0. Each instance
// reads Stripe through a fake of its own, so the test knows which instance asked for what.

const ADMIN = '/api/v1/admin';
const LEASE_SECONDS = 5;

async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 40_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await sleep(100);
  }
}

interface Instance {
  name: string;
  process: CliProcess;
  baseUrl: string;
  fake: FakeProvider;
  control: StripeHistoryControl;
}

const suite = postgresProblem ? describe.skip : describe;

suite('an integration job across two real instances', () => {
  const processes = new Processes();
  const database = `sl_jobs_${randomBytes(6).toString('hex')}`;
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${database}`;
  const instances: Instance[] = [];
  let db: Db;
  /** Releases every answer held back, at the end. */
  let releaseAll!: () => void;
  const held = new Promise<void>((resolve) => (releaseAll = resolve));
  const isSecondPage = (request: RecordedRequest) => historyPageRead(request) === '/v1/checkout/sessions?cs_2';
  let token: string;
  /** The instance left after the first test's kill -9. */
  let survivor: Instance;

  async function connectedWebsite(instance: Instance): Promise<string> {
    const created = await call(instance.baseUrl, 'POST', `${ADMIN}/websites`, {
      token,
      body: { domain: `shop-${randomBytes(4).toString('hex')}.example.com`, timezone: 'UTC', name: 'Shop' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const websiteId: string = created.body.data[0].id;
    const connected = await call(instance.baseUrl, 'POST', `${ADMIN}/websites/${websiteId}/integrations/provider-one`, { token, body: { providerOneRestrictedKey: GOOD_KEY } });
    expect(connected.status, JSON.stringify(connected.body)).toBe(200);
    return websiteId;
  }

  beforeAll(async () => {
    await asPostgresAdmin(`create database ${database}`);
    const secretKey = randomBytes(32).toString('base64');
    for (const name of ['a', 'b']) {
      // Every instance waits forever for the second page, until the test says otherwise.
      const control: StripeHistoryControl = { hold: (request) => (isSecondPage(request) ? held : null) };
      const fake = await startFakeProvider(stripeHistory(control));
      const port = await freePort();
      const child = processes.spawnCommand(process.execPath, [join(REPO_ROOT, 'bin/sightline.js'), 'serve'], {
        DATABASE_URL: url.toString(),
        HOST: '127.0.0.1',
        PORT: String(port),
        SIGHTLINE_SECRET_KEY: secretKey,
        LOG_LEVEL: 'info',
        GEOIP_DATABASE: 'none',
        REDIS_URL: undefined,
        SMTP_URL: undefined,
        PROVIDER_ONE_API_URL: fake.baseUrl,
        INTEGRATION_JOBS: 'on',
        INTEGRATION_JOB_LEASE_SECONDS: String(LEASE_SECONDS),
        INTEGRATION_JOB_RETRY_SECONDS: '1',
      });
      instances.push({ name, process: child, baseUrl: `http://127.0.0.1:${port}`, fake, control });
      // One after the other: the first runs the migrations.
      await waitForHealthy(`http://127.0.0.1:${port}`, child, 60_000);
    }
    db = createDatabase(url.toString(), { pgPoolSize: 2 });
  }, 120_000);

  afterAll(async () => {
    releaseAll();
    processes.killAll();
    await Promise.all(instances.map((instance) => instance.process.exited));
    await Promise.all(instances.map((instance) => instance.fake.close()));
    await db?.close();
    await asPostgresAdmin(`drop database if exists ${database} with (force)`);
  });

  it('runs the job in one instance, and after a kill -9 in the second page the other finishes it without duplicates', async () => {
    ({ token } = await createAccountWithToken(db.kysely, `jobs-${randomBytes(4).toString('hex')}@example.com`, 'Jobs'));
    const websiteId = await connectedWebsite(instances[0]!);

    // Whichever instance claimed the job reads the first page, commits it, and waits for the second.
    const running = (await until('an instance to ask for the second page', async () => instances.find((i) => i.fake.requests.some(isSecondPage)), Boolean))!;
    const other = instances.find((instance) => instance !== running)!;
    survivor = other;
    expect(other.fake.requests.map(historyPageRead).filter(Boolean), 'the other instance read nothing').toEqual([]);
    const job = await db.kysely.selectFrom('integration_jobs').selectAll().where('website_id', '=', websiteId).executeTakeFirstOrThrow();
    expect(job).toMatchObject({ status: 'running', attempts: 1, pages_done: 1, cursor: 'sessions:cs_2', payments_imported: 2 });

    running.process.killGroup();
    await running.process.exited;
    other.control.hold = null;
    const killedAt = Date.now();

    const status = async () => {
      const answer = await call(other.baseUrl, 'GET', `${ADMIN}/websites/${websiteId}/integrations`, { token });
      return answer.body.data[0]['provider-one'];
    };
    const done = await until('the other instance to finish the job', status, (s) => s.history?.status === 'succeeded');
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(LEASE_SECONDS * 1000 - 2000);
    expect(done.history).toMatchObject({ pages: HISTORY_PAGES, paymentsImported: HISTORY_PAYMENTS, attempts: 2, error: null });
    expect(done.account).toMatchObject({ status: 'verified', name: 'Acme Studio', currency: 'EUR' });

    // The first page was read once, by the instance that died; the survivor went on from the second.
    const reads = (instance: Instance) => instance.fake.requests.map(historyPageRead).filter(Boolean);
    expect(reads(running)).toEqual(['/v1/checkout/sessions?', '/v1/checkout/sessions?cs_2']);
    expect(reads(other)).toEqual(['/v1/checkout/sessions?cs_2', '/v1/checkout/sessions?cs_4', '/v1/invoices?']);
    const payments = await db.kysely.selectFrom('payments').select(['transaction_id', 'visitor_id']).where('website_id', '=', websiteId).orderBy('transaction_id').execute();
    expect(payments).toEqual([
      { transaction_id: 'in_renew', visitor_id: 'visitor-1' },
      ...[1, 2, 3, 4, 5].map((n) => ({ transaction_id: `pi_${n}`, visitor_id: `visitor-${n}` })),
    ]);
  }, 90_000);

  it('hands its job back on SIGTERM, the page under way left for the next instance, and exits 0', async () => {
    survivor.control.hold = (request) => (isSecondPage(request) ? held : null);
    const secondPages = () => survivor.fake.requests.filter(isSecondPage).length;
    const before = secondPages();
    const websiteId = await connectedWebsite(survivor);
    await until('the second page to be asked for', async () => secondPages(), (count) => count > before);

    survivor.process.child.kill('SIGTERM');
    const exit = await survivor.process.exited;
    expect(exit, survivor.process.describe()).toEqual({ code: 0, signal: null });
    const job = await db.kysely.selectFrom('integration_jobs').selectAll().where('website_id', '=', websiteId).executeTakeFirstOrThrow();
    expect(job).toMatchObject({ status: 'queued', attempts: 0, lease_owner: null, locked_until: null, pages_done: 1, cursor: 'sessions:cs_2' });
    expect(survivor.process.logLines().some((line) => /handed back at stop/.test(String(line.msg)))).toBe(true);
  }, 60_000);
});
