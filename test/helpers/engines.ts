import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { describe } from 'vitest';
import { type Db, type Engine, createDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';

// The same suite runs on both engines. PostgreSQL is needed for the second run: where it is
// unreachable the PostgreSQL suite is reported as skipped, unless SIGHTLINE_REQUIRE_POSTGRES=1
// (CI sets it), in which case the run fails instead of skipping.

export const POSTGRES_URL = process.env.SIGHTLINE_TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/test';
const REQUIRE_POSTGRES = process.env.SIGHTLINE_REQUIRE_POSTGRES === '1';

async function probePostgres(): Promise<string | null> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
    return null;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await client.end().catch(() => {});
  }
}

/** One statement on its own connection (create or drop a database of a test's own). */
export async function asPostgresAdmin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** Why PostgreSQL cannot be used here, or null when it can. */
export const postgresProblem = await probePostgres();
if (postgresProblem && REQUIRE_POSTGRES) {
  throw new Error(`SIGHTLINE_REQUIRE_POSTGRES=1 but PostgreSQL at ${POSTGRES_URL} is unreachable: ${postgresProblem}`);
}

export interface TestDatabase {
  db: Db;
  drop(): Promise<void>;
}

/** A fresh, migrated database: a temporary SQLite file, or a new PostgreSQL schema. */
export async function openTestDatabase(engine: Engine): Promise<TestDatabase> {
  if (engine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'sightline-test-'));
    const db = createDatabase(`sqlite:${join(dir, 'test.db')}`);
    await migrateToLatest(db);
    return { db, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const schema = `sl_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  const db = createDatabase(POSTGRES_URL, { pgSchema: schema, pgPoolSize: 4 });
  await migrateToLatest(db);
  return {
    db,
    drop: async () => {
      await admin.query(`drop schema ${schema} cascade`);
      await admin.end();
    },
  };
}

// The website-API suites add a third run with the events in clickhouse: see ./clickhouse.ts (describeEachEventEngine).
export const ENGINES: Engine[] = ['sqlite', 'postgres'];

/** Registers the same suite once per engine; the PostgreSQL one says why when it is skipped. */
export function describeEachEngine(name: string, suite: (engine: Engine) => void): void {
  describe(`${name} [sqlite]`, () => suite('sqlite'));
  if (postgresProblem) {
    describe.skip(`${name} [postgres] (skipped: PostgreSQL unreachable at ${POSTGRES_URL}: ${postgresProblem})`, () =>
      suite('postgres'),
    );
  } else {
    describe(`${name} [postgres]`, () => suite('postgres'));
  }
}
