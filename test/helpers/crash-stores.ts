import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe } from 'vitest';
import { type Db, createDatabase } from '../../src/db/database.ts';
import { POSTGRES_URL, asPostgresAdmin, postgresProblem } from './engines.ts';
import { type CliProcess, type EnvValues, Processes, REPO_ROOT, freePort, waitForHealthy } from './processes.ts';

// What the kill -9 tests share: server processes killed at the end, and a database per run that
// outlives them (a SQLite file in a scratch folder, or a PostgreSQL database of its own), dropped
// after the file's tests.

/** A database a server process is started on, and opened again here to check what it left. */
export interface CrashStore {
  url: string;
  open(): Db;
}

/** A Sightline server process on a store: `start` starts it, and starts it again after a kill. */
export interface CrashServer {
  baseUrl: string;
  /** The process of the latest start. */
  process(): CliProcess;
  start(): Promise<void>;
}

export interface CrashStores {
  processes: Processes;
  /** A server on `store` (no Redis, no ClickHouse, no GeoIP), with `env` besides. */
  server(store: CrashStore, env?: EnvValues): Promise<CrashServer>;
  sqlite(): CrashStore;
  postgres(): Promise<CrashStore>;
}

/** Call at the top of a test file: `prefix` names the scratch folder, files and databases. */
export function useCrashStores(prefix: string): CrashStores {
  const scratch = mkdtempSync(join(tmpdir(), `sightline-${prefix}-`));
  const processes = new Processes();
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    processes.killAll();
    for (const cleanup of cleanups) await cleanup().catch(() => {});
    rmSync(scratch, { recursive: true, force: true });
  });
  return {
    processes,
    async server(store, env = {}) {
      const port = await freePort();
      const baseUrl = `http://127.0.0.1:${port}`;
      const values = {
        DATABASE_URL: store.url,
        HOST: '127.0.0.1',
        PORT: String(port),
        SIGHTLINE_SECRET_KEY: randomBytes(32).toString('base64'),
        LOG_LEVEL: 'warn',
        GEOIP_DATABASE: 'none',
        REDIS_URL: undefined,
        CLICKHOUSE_URL: undefined,
        ...env,
      };
      let latest: CliProcess | null = null;
      return {
        baseUrl,
        process: () => {
          if (!latest) throw new Error('the server was never started');
          return latest;
        },
        async start() {
          latest = processes.spawnCommand(process.execPath, [join(REPO_ROOT, 'bin/sightline.js'), 'serve'], values);
          await waitForHealthy(baseUrl, latest, 60_000);
        },
      };
    },
    sqlite() {
      const url = `sqlite:${join(scratch, `${prefix}-${randomBytes(3).toString('hex')}.db`)}`;
      return { url, open: () => createDatabase(url) };
    },
    async postgres() {
      const name = `sl_${prefix}_${randomBytes(6).toString('hex')}`;
      await asPostgresAdmin(`create database ${name}`);
      cleanups.push(() => asPostgresAdmin(`drop database if exists ${name} with (force)`));
      const url = new URL(POSTGRES_URL);
      url.pathname = `/${name}`;
      return { url: url.toString(), open: () => createDatabase(url.toString(), { pgPoolSize: 2 }) };
    },
  };
}

/** `describe` on PostgreSQL, or a skipped one that says why when it is unreachable. */
export const describePostgres = postgresProblem
  ? (name: string, fn: () => void) => describe.skip(`${name} (skipped: PostgreSQL unreachable at ${POSTGRES_URL}: ${postgresProblem})`, fn)
  : describe;
