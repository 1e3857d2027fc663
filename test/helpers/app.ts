import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { loggerOptions } from '../../src/http/logging.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import type { Engine } from '../../src/db/database.ts';
import type { Database } from '../../src/db/schema.ts';
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
}

export const TEST_SECRET_KEY = Buffer.alloc(32, 7).toString('base64');

export const TEST_CONFIG_OVERRIDES: Partial<Config> = {
  rateLimit: { perCredential: 100_000, perAddress: 100_000, perPublicAddress: 100_000, windowMs: 60_000 },
  secretKey: TEST_SECRET_KEY,
};

/**
 * Builds the app on a fresh database for the enclosing describe block. The returned object is
 * filled in beforeAll, so use it inside tests only.
 */
export function useTestApp(engine: Engine, overrides: Partial<Config> = {}): TestApp {
  const ctx = { logLines: [] as string[] } as TestApp;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const database = await openTestDatabase(engine);
    drop = database.drop;
    ctx.config = loadConfig({}, { ...TEST_CONFIG_OVERRIDES, ...overrides, databaseUrl: 'test' });
    ctx.app = await buildApp({
      config: ctx.config,
      db: database.db,
      logger: loggerOptions('info', { write: (line: string) => ctx.logLines.push(line) }),
    });
    ctx.db = database.db.kysely;
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
