import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { type Engine, createDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { createAccountWithToken } from '../src/modules/account/account.service.ts';

// A fresh, migrated database per engine with one account and a full-access token.

export const POSTGRES_URL = process.env.SIGHTLINE_TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/test';

export interface BenchDatabase {
  engine: Engine;
  url: string;
  pgSchema?: string;
  token: string;
  /** Drops what was created (the SQLite file lives in the run's temporary directory). */
  drop(): Promise<void>;
}

/** null when PostgreSQL answers, otherwise why not. */
export async function postgresProblem(): Promise<string | null> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
    return null;
  } catch (error) {
    return `unreachable at ${POSTGRES_URL}: ${(error as Error).message}`;
  } finally {
    await client.end().catch(() => {});
  }
}

async function seed(url: string, pgSchema?: string): Promise<string> {
  const db = createDatabase(url, pgSchema ? { pgSchema } : {});
  try {
    await migrateToLatest(db);
    const { token } = await createAccountWithToken(db.kysely, 'bench@example.com', 'Bench');
    return token;
  } finally {
    await db.close();
  }
}

/** onDrop receives the clean-up as soon as there is something to clean (for Ctrl-C). */
export async function prepareDatabase(engine: Engine, tempDir: string, onDrop: (drop: () => Promise<void>) => void): Promise<BenchDatabase> {
  if (engine === 'sqlite') {
    // A file of its own per part: the ClickHouse part's accounts database must not meet the next.
    const url = `sqlite:${join(tempDir, `bench-${randomBytes(6).toString('hex')}.db`)}`;
    return { engine, url, token: await seed(url), drop: async () => {} };
  }
  const pgSchema = `sl_bench_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  let dropped = false;
  const drop = async () => {
    if (dropped) return;
    dropped = true;
    await admin.query(`drop schema if exists ${pgSchema} cascade`);
    await admin.end();
  };
  onDrop(drop);
  await admin.query(`create schema ${pgSchema}`);
  try {
    return { engine, url: POSTGRES_URL, pgSchema, token: await seed(POSTGRES_URL, pgSchema), drop };
  } catch (error) {
    await drop();
    throw error;
  }
}
