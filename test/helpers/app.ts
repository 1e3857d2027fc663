import type { FastifyInstance } from 'fastify';
import { type Kysely, type Selectable, sql } from 'kysely';
import { afterAll, beforeAll } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { loggerOptions } from '../../src/http/logging.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import type { Database, EventsTable } from '../../src/db/schema.ts';
import { type TestEngine, eventsOnClickHouse, recordsEngine, testClickHouseDatabase } from './clickhouse.ts';
import { openTestDatabase } from './engines.ts';

export interface ApiResponse {
  status: number;
  body: any;
  headers: Record<string, string | string[] | number | undefined>;
  raw: string;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  /** A raw payload sent as is (for malformed JSON and other content types). */
  payload?: string;
  headers?: Record<string, string>;
  query?: Record<string, string>;
}

export interface TestApp {
  app: FastifyInstance;
  db: Kysely<Database>;
  config: Config;
  /** Every log line the app wrote, for checks that no secret reaches a log. */
  logLines: string[];
  request(method: string, url: string, options?: RequestOptions): Promise<ApiResponse>;
  /**
   * The stored events (all columns, occurred_at as ISO), wherever this engine keeps them: the
   * relational events table, or ClickHouse once the relay has shipped what was accepted.
   */
  storedEvents(websiteId?: string): Promise<Selectable<EventsTable>[]>;
}

export const TEST_SECRET_KEY = Buffer.alloc(32, 7).toString('base64');

export const TEST_CONFIG_OVERRIDES: Partial<Config> = {
  rateLimit: { perCredential: 100_000, perAddress: 100_000, perPublicAddress: 100_000, windowMs: 60_000 },
  secretKey: TEST_SECRET_KEY,
  // Tests connect made-up credentials: no job may call a real provider's API with them. The
  // suites of the job worker turn it on with the providers' URLs at local fakes.
  integrationJobs: { enabled: false, maxAttempts: 3, retryBaseMs: 20, leaseMs: 60_000 },
  // A read waits for every event accepted before it (the suites read what they just wrote); the
  // bound's own suite (test/read-settle-wait.test.ts) sets one.
  analyticsSettleWaitMs: null,
  analyticsReadLagMs: 0,
  // The imports' suites turn their worker on and wait for it.
  imports: { jobs: false, maxUploadBytes: 10 * 1024 * 1024, chunkRows: 500 },
};

/**
 * Builds the app on a fresh database for the enclosing describe block. The returned object is
 * filled in beforeAll, so use it inside tests only.
 */
export function useTestApp(engine: TestEngine, overrides: Partial<Config> = {}): TestApp {
  const ctx = { logLines: [] as string[] } as TestApp;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const database = await openTestDatabase(recordsEngine(engine));
    const clickhouse = eventsOnClickHouse(engine) ? testClickHouseDatabase() : null;
    drop = async () => {
      await database.drop();
      await clickhouse?.drop();
    };
    ctx.config = loadConfig({}, { ...TEST_CONFIG_OVERRIDES, clickhouseUrl: clickhouse?.url, ...overrides, databaseUrl: 'test' });
    ctx.app = await buildApp({
      config: ctx.config,
      db: database.db,
      logger: loggerOptions('info', { write: (line: string) => ctx.logLines.push(line) }),
    });
    ctx.db = database.db.kysely;
    ctx.storedEvents = async (websiteId) => {
      const clickhouse = ctx.app.clickhouse;
      if (!clickhouse) {
        let query = ctx.db.selectFrom('events').selectAll();
        if (websiteId !== undefined) query = query.where('website_id', '=', websiteId);
        return query.orderBy('occurred_at').orderBy('id').execute();
      }
      await clickhouse.relay.settle();
      const where = websiteId === undefined ? sql`1 = 1` : sql`website_id = ${websiteId}`;
      const rows = await clickhouse.ch.rows<Record<string, unknown>>(sql`select * from events where ${where} order by occurred_ms, id`);
      return rows.map(({ occurred_ms, ...row }) => ({
        ...row,
        occurred_at: new Date(Number(occurred_ms)).toISOString(),
      })) as unknown as Selectable<EventsTable>[];
    };
    ctx.request = async (method, url, options = {}) => {
      const headers: Record<string, string> = { ...options.headers };
      if (options.token) headers.authorization = `Bearer ${options.token}`;
      let payload = options.payload;
      if (options.body !== undefined) {
        payload = JSON.stringify(options.body);
        headers['content-type'] ??= 'application/json';
      }
      const response = await ctx.app.inject({ method: method as 'GET', url, headers, payload, query: options.query });
      let body: unknown = null;
      try {
        body = response.json();
      } catch {
        body = null;
      }
      return { status: response.statusCode, body, headers: response.headers, raw: response.body };
    };
  });

  afterAll(async () => {
    await ctx.app?.close();
    await ctx.app?.db.close();
    await drop?.();
  });

  return ctx;
}

/**
 * Settles the app's rollup backlog for a website (every website's without one): what a read of
 * the website API does first, for tests that read the rollup tables or an event store of their own.
 */
export function settleRollups(t: TestApp): (websiteId?: string) => Promise<void> {
  return async (websiteId) => {
    await t.app.events.flush();
    await t.app.rollups?.settle(websiteId);
  };
}

/**
 * Writes events as ingestion does and derives their rollups at once, as a derivation of their
 * own (so tests of the incremental rollups see batch after batch, not one derivation of all).
 */
export async function writeAndDerive(t: TestApp, events: Parameters<TestApp['app']['events']['write']>[0]) {
  const recorded = await t.app.events.write(events);
  await settleRollups(t)();
  return recorded;
}
