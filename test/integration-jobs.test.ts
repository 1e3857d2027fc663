import { expect, it } from 'vitest';
import { createAdapters, hasApi } from '../src/modules/integrations/adapters/index.ts';
import { IntegrationJobWorker } from '../src/modules/integrations/integration-job-worker.ts';
import { queueResync } from '../src/modules/integrations/integrations.service.ts';
import { claimNextJob, commitPage } from '../src/modules/integrations/job-queue.ts';
import type { Provider } from '../src/modules/integrations/providers.ts';
import { startFakeProvider } from './integration-adapters/fake-provider.ts';
import { DOWN_KEY, GOOD_KEY, HISTORY_PAGES, HISTORY_PAYMENTS, REVOKED_KEY, type StripeHistoryControl, historyPageRead, stripeHistory } from './helpers/fake-stripe-history.ts';
import { type TestApp, useTestApp } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { createAccount, createWebsite } from './helpers/factories.ts';

// The integration job worker against a local Stripe (provider-one): the check of a credential
// after connect, the history import page by page through the payment writer, retries, and the
// lease that lets another worker finish a job whose worker died. The workers here share this
// process and its database; integration-jobs-processes.test.ts does the same with two real
// `sightline serve` processes and a kill -9.

const GOOD = GOOD_KEY;
const REVOKED = REVOKED_KEY;
const DOWN = DOWN_KEY;
const PAYMENTS = HISTORY_PAYMENTS;
const PAGES = HISTORY_PAGES;

/** Holds the answer to GET /v1/account until released, so a test sees the check under way. */
let accountGate: Promise<void> | null = null;
/** Holds the answer to the second page of checkouts, for a stop that cannot wait for it. */
let secondPageGate: Promise<void> | null = null;
const control: StripeHistoryControl = {
  hold: (request) => (request.path === '/v1/account' ? accountGate : historyPageRead(request) === '/v1/checkout/sessions?cs_2' ? secondPageGate : null),
};

const fake = await startFakeProvider(stripeHistory(control));
const PROVIDER_URLS = { 'provider-one': fake.baseUrl };
const JOBS = { enabled: true, maxAttempts: 3, retryBaseMs: 20, leaseMs: 60_000 };

const integrationsUrl = (websiteId: string) => `/api/v1/admin/websites/${websiteId}/integrations`;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function harness(t: TestApp) {
  const responses: string[] = [];
  const status = async (token: string, websiteId: string) => {
    const response = await t.request('GET', integrationsUrl(websiteId), { token });
    expect(response.status, response.raw).toBe(200);
    responses.push(response.raw);
    return response.body.data[0]['provider-one'];
  };
  const connect = async (key: string) => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const response = await t.request('POST', `${integrationsUrl(website.id)}/provider-one`, { token: owner.token, body: { providerOneRestrictedKey: key } });
    expect(response.status, response.raw).toBe(200);
    responses.push(response.raw);
    return { owner, website, connected: response.body.data[0] };
  };
  const historyEnded = (token: string, websiteId: string) =>
    until(() => status(token, websiteId), (s) => s.history?.status === 'succeeded' || s.history?.status === 'failed', 'the history job to end');
  const payments = (websiteId: string) =>
    t.db.selectFrom('payments').select(['transaction_id', 'visitor_id', 'renewal']).where('website_id', '=', websiteId).orderBy('transaction_id').execute();
  return { responses, status, connect, historyEnded, payments };
}

describeEachEngine('integration jobs', (engine) => {
  const t = useTestApp(engine, { providerApiUrls: PROVIDER_URLS, integrationJobs: JOBS });
  const { responses, status, connect, historyEnded, payments } = harness(t);

  it('answers connect as before, shows the check under way, then the account name and currency', async () => {
    let release!: () => void;
    accountGate = new Promise((resolve) => (release = resolve));
    try {
      const { owner, website, connected } = await connect(GOOD);
      expect(Object.keys(connected)).toEqual(['message', 'provider', 'connected', 'connectedAt', 'currency']);
      const during = await until(() => status(owner.token, website.id), (s) => s.history?.status === 'running', 'the job to start');
      expect(during.account).toEqual({ status: 'verifying', name: null, currency: null, error: null, verifiedAt: null });
      release();
      const after = await historyEnded(owner.token, website.id);
      expect(after.account).toEqual({ status: 'verified', name: 'Acme Studio', currency: 'EUR', error: null, verifiedAt: expect.stringMatching(ISO_MS) });
      expect(after.history).toMatchObject({ status: 'succeeded', pages: PAGES, paymentsImported: PAYMENTS, attempts: 1, error: null });
    } finally {
      accountGate = null;
      release?.();
    }
  });

  it('imports three pages of checkouts and the renewals once, each payment with the visitor of its metadata', async () => {
    const { owner, website } = await connect(GOOD);
    await historyEnded(owner.token, website.id);
    const recorded = await payments(website.id);
    expect(recorded.map((p) => [p.transaction_id, p.visitor_id, Boolean(p.renewal)])).toEqual([
      ['in_renew', 'visitor-1', true],
      ...[1, 2, 3, 4, 5].map((n) => [`pi_${n}`, `visitor-${n}`, false]),
    ]);
    // The payments history was read from 365 days back.
    const first = fake.requests.find((r) => r.path === '/v1/checkout/sessions' && r.query.get('limit') === '100');
    const since = Number(first?.query.get('created[gte]'));
    expect(Math.abs(since - (Date.now() / 1000 - 365 * 86_400))).toBeLessThan(600);
  });

  it('imports again on a re-sync without recording a payment twice', async () => {
    const { owner, website } = await connect(GOOD);
    await historyEnded(owner.token, website.id);
    const before = await payments(website.id);
    const queued = await queueResync(t.db, website.id, 'provider-one');
    expect(queued.resync.status).toBe('queued');
    t.app.integrationJobs!.wake();
    const after = await until(
      () => status(owner.token, website.id),
      (s) => s.history?.requestedAt === queued.resync.requestedAt && s.history.status === 'succeeded',
      'the re-sync to end',
    );
    expect(after.history).toMatchObject({ pages: PAGES, paymentsImported: PAYMENTS });
    expect(await payments(website.id)).toEqual(before);
    expect(before).toHaveLength(PAYMENTS);
  });

  it('shows what the provider answered for a revoked key, never the key, and does not retry it', async () => {
    const { owner, website } = await connect(REVOKED);
    const after = await historyEnded(owner.token, website.id);
    expect(after.account).toMatchObject({ status: 'failed', name: null, currency: null, error: expect.stringMatching(/Invalid API Key/) });
    expect(after.history).toMatchObject({ status: 'failed', attempts: 1, error: after.account.error });
    expect(await payments(website.id)).toEqual([]);
  });

  it('retries a job whose provider fails, then marks it failed with the error', async () => {
    const { owner, website } = await connect(DOWN);
    const after = await historyEnded(owner.token, website.id);
    expect(after.history).toMatchObject({ status: 'failed', attempts: JOBS.maxAttempts, error: expect.any(String), finishedAt: expect.stringMatching(ISO_MS) });
    expect(after.account).toMatchObject({ status: 'failed', error: after.history.error });
    const job = await t.db.selectFrom('integration_jobs').selectAll().where('website_id', '=', website.id).executeTakeFirstOrThrow();
    expect(job).toMatchObject({ status: 'failed', attempts: JOBS.maxAttempts, lease_owner: null, locked_until: null });
  });

  it('counts the jobs and the payments imported on /metrics', async () => {
    const scrape = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    const value = (series: string) => Number(new RegExp(`^${series.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(scrape)?.[1]);
    expect(value('sightline_integration_payments_imported_total{provider="provider-one"}')).toBeGreaterThanOrEqual(PAYMENTS * 4);
    expect(value('sightline_integration_jobs{status="failed"}')).toBeGreaterThanOrEqual(2);
    expect(value('sightline_integration_jobs{status="queued"}')).toBe(0);
    expect(value('sightline_integration_jobs{status="running"}')).toBe(0);
  });

  // Runs last: no answer and no log line of this suite holds a key.
  it('never returned or logged a key', async () => {
    expect(responses.length).toBeGreaterThan(10);
    const text = `${responses.join('\n')}\n${t.logLines.join('\n')}`;
    for (const key of [GOOD, REVOKED, DOWN]) expect(text).not.toContain(key.slice('rk_test_'.length));
  });
});

describeEachEngine('integration job lease', (engine) => {
  // The app's own worker is off: the workers here are the only ones.
  const t = useTestApp(engine, { providerApiUrls: PROVIDER_URLS, integrationJobs: { ...JOBS, enabled: false } });
  const { connect, status, payments } = harness(t);
  const LEASE_MS = 400;

  const worker = () => {
    const adapters = createAdapters(PROVIDER_URLS);
    return new IntegrationJobWorker(
      {
        db: t.db,
        keyring: t.app.keyring,
        adapterOf: (provider) => {
          const adapter = adapters[provider as Provider];
          return adapter && hasApi(adapter) ? adapter : null;
        },
        log: t.app.log,
      },
      { maxAttempts: 3, retryBaseMs: 20, leaseMs: LEASE_MS, pollIntervalMs: 50, stopWaitMs: 300 },
    );
  };

  it('lets another worker finish, from its last committed page, a job whose worker died; one worker runs it', async () => {
    const { owner, website } = await connect(GOOD);
    // The worker that dies: it claims the job, commits the first page of the import, and is gone.
    const claimed = await claimNextJob(t.db, 'resync', new Date().toISOString(), { owner: 'dead-worker', ms: LEASE_MS });
    expect(claimed?.website_id).toBe(website.id);
    expect(await commitPage(t.db, claimed!, { owner: 'dead-worker', ms: LEASE_MS }, { cursor: 'sessions:cs_2', payments: 2 }, new Date().toISOString())).toBe(true);

    const diedAt = Date.now();
    const requestsBefore = fake.requests.length;
    const [second, third] = [worker(), worker()];
    second.start();
    third.start();
    try {
      const ended = await until(() => status(owner.token, website.id), (s) => s.history?.status === 'succeeded', 'the job to be taken over');
      expect(Date.now() - diedAt).toBeGreaterThanOrEqual(LEASE_MS - 50);
      // Pages 2 and 3 of the sessions and the invoices: the first page is not read again, and no page twice.
      expect(ended.history).toMatchObject({ pages: PAGES, paymentsImported: PAYMENTS, attempts: 2 });
      const pageReads = fake.requests.slice(requestsBefore).map(historyPageRead).filter((read) => read !== null);
      expect(pageReads).toEqual([
        '/v1/checkout/sessions?cs_2',
        '/v1/checkout/sessions?cs_4',
        '/v1/invoices?',
      ]);
      // The dead worker's page was never recorded (it died before); a takeover records what follows its cursor.
      expect((await payments(website.id)).map((p) => p.transaction_id)).toEqual(['in_renew', 'pi_3', 'pi_4', 'pi_5']);
    } finally {
      await Promise.all([second.stop(), third.stop()]);
    }
  });

  it('hands its job back when it stops, for the next worker to go on at once', async () => {
    const { owner, website } = await connect(GOOD);
    let release!: () => void;
    accountGate = new Promise((resolve) => (release = resolve));
    const first = worker();
    try {
      first.start();
      await until(() => status(owner.token, website.id), (s) => s.history?.status === 'running', 'the job to start');
      const stopping = first.stop();
      release();
      await stopping;
    } finally {
      accountGate = null;
      release?.();
    }
    const handedBack = await t.db.selectFrom('integration_jobs').selectAll().where('website_id', '=', website.id).executeTakeFirstOrThrow();
    expect(handedBack).toMatchObject({ status: 'queued', attempts: 0, lease_owner: null, locked_until: null, pages_done: 0 });
    const next = worker();
    next.start();
    try {
      await until(() => status(owner.token, website.id), (s) => s.history?.status === 'succeeded', 'the next worker to finish');
    } finally {
      await next.stop();
    }
    expect(await payments(website.id)).toHaveLength(PAYMENTS);
  });

  it('does not wait at a stop for a provider that is slow to answer: the job is handed back at once', async () => {
    const { owner, website } = await connect(GOOD);
    let release!: () => void;
    secondPageGate = new Promise((resolve) => (release = resolve));
    const slow = worker();
    try {
      slow.start();
      await until(() => status(owner.token, website.id), (s) => s.history?.pages === 1, 'the first page');
      const stopping = Date.now();
      await slow.stop();
      expect(Date.now() - stopping).toBeLessThan(2_000);
      const handedBack = await t.db.selectFrom('integration_jobs').selectAll().where('website_id', '=', website.id).executeTakeFirstOrThrow();
      expect(handedBack).toMatchObject({ status: 'queued', attempts: 0, lease_owner: null, locked_until: null, pages_done: 1, cursor: 'sessions:cs_2' });
    } finally {
      secondPageGate = null;
      release?.();
    }
    // The late answer finds the job no longer its worker's; the next worker goes on from the cursor.
    const next = worker();
    next.start();
    try {
      const ended = await until(() => status(owner.token, website.id), (s) => s.history?.status === 'succeeded', 'the next worker to finish');
      expect(ended.history).toMatchObject({ pages: PAGES, attempts: 1 });
    } finally {
      await next.stop();
    }
    expect(await payments(website.id)).toHaveLength(PAYMENTS);
  });
});
