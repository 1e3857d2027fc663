import { randomBytes, randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import { type Db, createDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { loggerOptions } from '../../src/http/logging.ts';
import { createAccountWithToken } from '../../src/modules/account/account.service.ts';
import { TEST_CONFIG_OVERRIDES } from './app.ts';
import { POSTGRES_URL } from './engines.ts';
import { type TcpProxy, startTcpProxy } from './tcp-proxy.ts';

// Sightline on a real port, on a database of the test's choosing (through a relay the test can
// cut, if asked), and the requests the database-fault tests send to it over real HTTP.

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';
const REQUEST_TIMEOUT_MS = 15_000;

export interface Answer {
  status: number;
  body: any;
  retryAfter: string | null;
  ms: number;
}

/** A real HTTP request; one that hangs fails the test instead of stalling it. */
export async function call(baseUrl: string, method: string, path: string, options: { token?: string; body?: unknown } = {}): Promise<Answer> {
  const started = Date.now();
  const headers: Record<string, string> = { 'user-agent': CHROME };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await response.text();
  let body: any = null;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: response.status, body, retryAfter: response.headers.get('retry-after'), ms: Date.now() - started };
}

export interface Site {
  baseUrl: string;
  token: string;
  website: { id: string; domain: string; trackingId: string };
}

/** The three requests every scenario sends: an admin read, an admin write, a browser event. */
export const adminRead = (s: Site) => call(s.baseUrl, 'GET', '/api/v1/admin/websites', { token: s.token });
export const adminWrite = (s: Site) =>
  call(s.baseUrl, 'POST', '/api/v1/admin/websites', {
    token: s.token,
    body: { domain: `w-${randomBytes(5).toString('hex')}.example.com`, timezone: 'Europe/Paris', name: 'Fault test' },
  });
export const ingest = (s: Site) =>
  call(s.baseUrl, 'POST', '/api/events', {
    body: {
      websiteId: s.website.trackingId,
      domain: s.website.domain,
      href: `https://${s.website.domain}/pricing`,
      visitorId: randomUUID(),
      type: 'pageview',
    },
  });

export function expectUnavailable(answer: Answer) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(503);
  expect(answer.body).toMatchObject({ status: 'error', error: { code: 503, message: expect.stringMatching(/database/i) } });
  expect(Number(answer.retryAfter)).toBeGreaterThan(0);
}

/** Sightline listening on a real port, on its own schema and with its own application_name. */
export class Sightline {
  app!: FastifyInstance;
  db!: Db;
  site!: Site;
  readonly logLines: string[] = [];
  readonly applicationName = `sl_faults_${randomBytes(4).toString('hex')}`;

  async start(databaseUrl: string, pgSchema?: string, overrides: Partial<Config> = {}): Promise<this> {
    this.db = createDatabase(databaseUrl, {
      pgSchema,
      applicationName: this.applicationName,
      pgPoolSize: 6,
      queryTimeoutMs: overrides.databaseQueryTimeoutMs,
    });
    await migrateToLatest(this.db);
    const config = loadConfig({}, { ...TEST_CONFIG_OVERRIDES, ...overrides, databaseUrl: 'test' });
    this.app = await buildApp({ config, db: this.db, logger: loggerOptions('info', { write: (line: string) => this.logLines.push(line) }) });
    await this.app.listen({ host: '127.0.0.1', port: 0 });
    const address = this.app.server.address();
    const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const { token } = await createAccountWithToken(this.db.kysely, `faults-${randomBytes(4).toString('hex')}@example.com`, 'Faults');
    const created = await call(baseUrl, 'POST', '/api/v1/admin/websites', {
      token,
      body: { domain: `site-${randomBytes(4).toString('hex')}.example.com`, timezone: 'Europe/Paris', name: 'Faults' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    this.site = { baseUrl, token, website: created.body.data[0] };
    return this;
  }

  async stop(): Promise<void> {
    await this.app?.close();
    await this.db?.close();
  }
}

/** Sightline reaching PostgreSQL through a relay the test can cut. */
export async function startBehindProxy(schema: string, overrides: Partial<Config> = {}): Promise<{ proxy: TcpProxy; sightline: Sightline }> {
  const target = new URL(POSTGRES_URL);
  const proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
  const viaProxy = new URL(POSTGRES_URL);
  viaProxy.hostname = '127.0.0.1';
  viaProxy.port = String(proxy.port);
  return { proxy, sightline: await new Sightline().start(viaProxy.toString(), schema, overrides) };
}
