import { type AddressInfo, createServer } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { ConfigError, loadConfig } from '../src/config.ts';
import { createDatabase } from '../src/db/database.ts';
import { READ_DEADLINE_MS } from '../src/http/metrics-database.ts';
import { TEST_CONFIG_OVERRIDES, useTestApp } from './helpers/app.ts';
import { POSTGRES_URL, describeEachEngine, openTestDatabase } from './helpers/engines.ts';
import { UNKNOWN_ID, createAccount, createApiKey, createWebsite } from './helpers/factories.ts';
import { startTcpProxy } from './helpers/tcp-proxy.ts';

// /metrics scraped over a real socket, as Prometheus does, after real traffic: every number is
// checked against what the test did, and the labels against what must never appear in them.

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (prom-client writes one sample per line). */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[key!] = value!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

class Scrape {
  readonly samples: Sample[];
  constructor(readonly text: string) {
    this.samples = parseExposition(text);
  }

  /** The one sample of that name whose labels include `labels`; undefined when absent. */
  value(name: string, labels: Record<string, string> = {}): number | undefined {
    const found = this.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
    if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} matches ${found.length} samples`);
    return found[0]?.value;
  }

  has(name: string): boolean {
    return this.samples.some((s) => s.name === name);
  }
}

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

async function scrape(base: string, token?: string): Promise<Scrape> {
  const response = await fetch(`${base}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return new Scrape(text);
}

/** An SMTP URL nobody listens on: queued alert e-mail stays pending (retried later). */
async function closedSmtpUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `smtp://127.0.0.1:${port}`;
}

const REQUESTS = 'sightline_http_request_duration_seconds_count';
const BROWSER = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36';
const smtpUrl = await closedSmtpUrl();

describeEachEngine('GET /metrics', (engine) => {
  const t = useTestApp(engine, { smtpUrl });
  let base: string;
  beforeAll(async () => {
    base = await listen(t.app);
  });

  const call = async (method: string, path: string, options: { token?: string; body?: unknown; userAgent?: string } = {}) => {
    const headers: Record<string, string> = { 'user-agent': options.userAgent ?? BROWSER };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${base}${path}`, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
    return { status: response.status, dropped: response.headers.get('x-sightline-dropped'), body: await response.json().catch(() => null) };
  };

  it('counts requests by route template, events accepted and dropped, the outbox, the jobs and the pool', async () => {
    const before = await scrape(base);
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const apiKey = await createApiKey(t, owner.token, website.id);
    const websitePath = `/api/v1/admin/websites/${website.id}`;

    for (let i = 0; i < 3; i++) expect((await call('GET', websitePath, { token: owner.token })).status).toBe(200);
    expect((await call('GET', `/api/v1/admin/websites/${UNKNOWN_ID}`, { token: owner.token })).status).toBe(404);
    expect((await call('GET', `/api/v1/admin/${owner.token}`)).status).toBe(404);
    expect((await call('PUT', websitePath, { token: owner.token, body: { excludedPaths: ['/private/*'] } })).status).toBe(200);
    const alert = { name: 'Signups', trigger: { goalName: 'signup' }, template: { message: 'Someone signed up.' } };
    const created = await call('POST', `${websitePath}/alerts`, { token: owner.token, body: alert });
    expect(created.status, JSON.stringify(created.body)).toBe(200);

    const pageview = (path: string) => ({ websiteId: website.trackingId, href: `https://${website.domain}${path}`, type: 'pageview', visitorId: 'v-1' });
    const ingest = (path: string, userAgent?: string) => call('POST', '/api/events', { body: pageview(path), userAgent });
    expect(await ingest('/pricing')).toMatchObject({ status: 200, dropped: null });
    expect(await ingest('/pricing', 'Googlebot/2.1 (+http://www.google.com/bot.html)')).toMatchObject({ status: 200, dropped: 'bot' });
    expect(await ingest('/private/page')).toMatchObject({ status: 200, dropped: 'excluded-path' });
    expect(await ingest('/private/other')).toMatchObject({ status: 200, dropped: 'excluded-path' });
    const goal = await call('POST', '/api/v1/goals', { token: apiKey.key, body: { datafast_visitor_id: 'v-1', name: 'signup' } });
    expect(goal.status, JSON.stringify(goal.body)).toBe(200);
    const paymentBody = { amount: 9.5, currency: 'USD', transaction_id: 'tx-1' };
    const payment = await call('POST', `/api/v1/payments?websiteId=${website.id}`, { token: owner.token, body: paymentBody });
    expect(payment.status, JSON.stringify(payment.body)).toBe(200);
    const integration = `${websitePath}/integrations/provider-four`;
    expect((await call('POST', integration, { token: owner.token, body: { providerFourApiKey: 'pf4-key-123456' } })).status).toBe(200);
    expect((await call('PATCH', integration, { token: owner.token })).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await call('GET', `/api/v1/analytics/overview?websiteId=${website.id}`, { token: owner.token })).status).toBe(200);

    const after = await scrape(base);
    const delta = (name: string, labels: Record<string, string>) => (after.value(name, labels) ?? 0) - (before.value(name, labels) ?? 0);
    const route = (method: string, template: string, status: number) => ({ method, route: template, status_code: String(status) });

    expect(delta(REQUESTS, route('GET', '/api/v1/admin/websites/:websiteId', 200))).toBe(3);
    expect(delta(REQUESTS, route('GET', '/api/v1/admin/websites/:websiteId', 404))).toBe(1);
    expect(delta(REQUESTS, route('PUT', '/api/v1/admin/websites/:websiteId', 200))).toBe(1);
    expect(delta(REQUESTS, route('GET', 'unmatched', 404))).toBe(1);
    expect(delta(REQUESTS, route('POST', '/api/events', 200))).toBe(4);
    expect(delta(REQUESTS, route('PATCH', '/api/v1/admin/websites/:websiteId/integrations/provider-four', 200))).toBe(1);
    // The scrape before this one is counted once it has answered.
    expect(delta(REQUESTS, route('GET', '/metrics', 200))).toBe(1);
    const websiteReads = route('GET', '/api/v1/admin/websites/:websiteId', 200);
    expect(after.value('sightline_http_request_duration_seconds_bucket', { ...websiteReads, le: '+Inf' })).toBe(after.value(REQUESTS, websiteReads));
    expect(after.value('sightline_http_request_duration_seconds_sum', websiteReads)).toBeGreaterThan(0);

    // Each analytics read: its wait for a read slot and its time in one, by route.
    const overviewReads = { route: '/api/v1/analytics/overview' };
    expect(delta('sightline_analytics_read_service_seconds_count', overviewReads)).toBe(2);
    expect(delta('sightline_analytics_read_wait_seconds_count', overviewReads)).toBe(2);
    expect(delta('sightline_analytics_read_service_seconds_sum', overviewReads)).toBeGreaterThan(0);
    expect(after.value('sightline_analytics_read_service_seconds_bucket', { ...overviewReads, le: '+Inf' })).toBe(after.value('sightline_analytics_read_service_seconds_count', overviewReads));

    expect(delta('sightline_events_accepted_total', { source: 'browser' })).toBe(1);
    expect(delta('sightline_events_accepted_total', { source: 'server_goal' })).toBe(1);
    expect(delta('sightline_events_accepted_total', { source: 'payment' })).toBe(1);
    expect(delta('sightline_events_dropped_total', { reason: 'bot' })).toBe(1);
    expect(delta('sightline_events_dropped_total', { reason: 'excluded-path' })).toBe(2);
    expect(after.value('sightline_events_dropped_total', { reason: 'excluded-ip' })).toBe(0);

    // The goal fired the alert: its e-mail is queued (the SMTP server is unreachable, so it stays).
    expect(after.value('sightline_mail_outbox_messages', { status: 'pending' })).toBe(1);
    expect(after.value('sightline_mail_outbox_messages', { status: 'failed' })).toBe(0);
    expect(after.value('sightline_mail_outbox_oldest_pending_age_seconds')).toBeGreaterThanOrEqual(0);
    expect(after.value('sightline_integration_jobs', { status: 'queued' })).toBe(1);
    expect(after.value('sightline_integration_jobs', { status: 'running' })).toBe(0);
    expect(after.value('sightline_database_up')).toBe(1);

    if (engine === 'postgres') {
      expect(after.value('sightline_database_pool_max_connections')).toBe(4);
      expect(after.value('sightline_database_pool_connections')).toBeGreaterThanOrEqual(1);
      expect(after.value('sightline_database_pool_waiting_queries')).toBe(0);
    } else {
      expect(after.has('sightline_database_pool_connections')).toBe(false);
    }
    expect(after.value('sightline_process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(after.has('sightline_nodejs_eventloop_lag_seconds')).toBe(true);

    // Templates only: no id, no credential, no domain.
    for (const secret of [website.id, website.trackingId, website.domain, owner.token, apiKey.key, UNKNOWN_ID, 'dft_', 'df_']) {
      expect(after.text).not.toContain(secret);
    }
    for (const sample of after.samples) if (sample.labels.route) expect(sample.labels.route).toMatch(/^(unmatched|\/[A-Za-z0-9/:*_-]*)$/);

    // An e-mail whose attempts are exhausted is a failed delivery.
    await t.db.updateTable('mail_outbox').set({ status: 'failed' }).where('website_id', '=', website.id).execute();
    const later = await scrape(base);
    expect(later.value('sightline_mail_outbox_messages', { status: 'pending' })).toBe(0);
    expect(later.value('sightline_mail_outbox_messages', { status: 'failed' })).toBe(1);
    expect(later.value('sightline_mail_outbox_oldest_pending_age_seconds')).toBe(0);
  });

  it('logs scrapes at no level below warn', async () => {
    const logged = t.logLines.length;
    await scrape(base);
    expect(t.logLines.slice(logged).filter((line) => line.includes('/metrics'))).toEqual([]);
  });
});

describeEachEngine('GET /metrics with METRICS_TOKEN', (engine) => {
  const token = 'scrape-7f3a9c1e-secret';
  const t = useTestApp(engine, { metricsToken: token });
  let base: string;
  beforeAll(async () => {
    base = await listen(t.app);
  });

  it.each([
    ['no credential', {}],
    ['a wrong token', { authorization: 'Bearer scrape-7f3a9c1e-secreT' }],
    ['a longer token', { authorization: `Bearer ${token}x` }],
    ['another scheme', { authorization: `Basic ${token}` }],
  ])('answers 401 in the envelope to %s', async (_what, headers: Record<string, string>) => {
    const response = await fetch(`${base}/metrics`, { headers });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await response.json()).toMatchObject({ status: 'error', error: { code: 401, message: expect.stringMatching(/METRICS_TOKEN/) } });
  });

  it('answers the scrape with the token', async () => {
    const answer = await scrape(base, token);
    expect(answer.value('sightline_database_up')).toBe(1);
    expect(answer.text).not.toContain(token);
  });
});

describeEachEngine('GET /metrics while the database is down', (engine) => {
  it('still answers, with sightline_database_up 0 and no database gauges, and recovers', async () => {
    const migrated = await openTestDatabase(engine);
    const target = new URL(POSTGRES_URL);
    const proxy = engine === 'postgres' ? await startTcpProxy(target.hostname, Number(target.port || 5432)) : null;
    if (proxy) target.host = `127.0.0.1:${proxy.port}`;
    const db = proxy ? createDatabase(target.toString(), { pgSchema: migrated.db.pgSchema!, pgPoolSize: 2 }) : migrated.db;
    // PostgreSQL: the network to the server goes away. SQLite: the tables the gauges read do
    // (an SQLite file cannot go down; its reads can fail).
    const tables = ['mail_outbox', 'integration_jobs'];
    const breakDatabase = async () => {
      if (proxy) await proxy.cut();
      else for (const table of tables) await sql.raw(`alter table ${table} rename to ${table}_away`).execute(db.kysely);
    };
    const repairDatabase = async () => {
      if (proxy) await proxy.restore();
      else for (const table of tables) await sql.raw(`alter table ${table}_away rename to ${table}`).execute(db.kysely);
    };
    const app = await buildApp({ config: loadConfig({}, { ...TEST_CONFIG_OVERRIDES, databaseUrl: 'test' }), db, logger: false });
    try {
      const base = await listen(app);
      expect((await scrape(base)).value('sightline_database_up')).toBe(1);

      await breakDatabase();
      expect((await fetch(`${base}/nowhere`)).status).toBe(404);
      const started = Date.now();
      const down = await scrape(base);
      expect(Date.now() - started).toBeLessThan(READ_DEADLINE_MS + 1000);
      expect(down.value('sightline_database_up')).toBe(0);
      expect(down.has('sightline_mail_outbox_messages')).toBe(false);
      expect(down.has('sightline_integration_jobs')).toBe(false);
      expect(down.value(REQUESTS, { method: 'GET', route: 'unmatched', status_code: '404' })).toBe(1);
      expect(down.value('sightline_events_accepted_total', { source: 'browser' })).toBe(0);

      await repairDatabase();
      const back = await scrape(base);
      expect(back.value('sightline_database_up')).toBe(1);
      expect(back.value('sightline_integration_jobs', { status: 'queued' })).toBe(0);
    } finally {
      await app.close();
      if (proxy) await Promise.all([db.close(), proxy.close()]);
      await migrated.db.close();
      await migrated.drop();
    }
  });
});

describe('METRICS_TOKEN', () => {
  it('is read from the environment, and refused when a header could not carry it', () => {
    expect(loadConfig({}).metricsToken).toBeUndefined();
    expect(loadConfig({ METRICS_TOKEN: 'abc-123' }).metricsToken).toBe('abc-123');
    expect(() => loadConfig({ METRICS_TOKEN: 'two words' })).toThrow(ConfigError);
  });
});
