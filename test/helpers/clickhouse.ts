import { randomBytes } from 'node:crypto';
import { createClient } from '@clickhouse/client';
import { describe, it } from 'vitest';
import type { Engine } from '../../src/db/database.ts';
import { postgresProblem, POSTGRES_URL } from './engines.ts';

// The website-API suites run a third time with the events in ClickHouse (accounts and websites
// on SQLite). Where no ClickHouse answers that run is reported as skipped with the reason, unless
// SIGHTLINE_REQUIRE_CLICKHOUSE=1 (CI sets it), in which case the run fails instead.

export const CLICKHOUSE_URL = process.env.SIGHTLINE_TEST_CLICKHOUSE_URL || 'http://127.0.0.1:8123';
const REQUIRE_CLICKHOUSE = process.env.SIGHTLINE_REQUIRE_CLICKHOUSE === '1';

async function probeClickHouse(): Promise<string | null> {
  const client = createClient({ url: CLICKHOUSE_URL, request_timeout: 2000 });
  try {
    const result = await client.ping();
    return result.success ? null : (result.error as Error).message;
  } finally {
    await client.close();
  }
}

/** Why ClickHouse cannot be used here, or null when it can. */
export const clickhouseProblem = await probeClickHouse();
if (clickhouseProblem && REQUIRE_CLICKHOUSE) {
  throw new Error(`SIGHTLINE_REQUIRE_CLICKHOUSE=1 but ClickHouse at ${CLICKHOUSE_URL} does not answer: ${clickhouseProblem}`);
}

/** `describe` for a suite that needs ClickHouse itself: where none answers, skipped with the reason. */
export function describeWithClickHouse(name: string, suite: () => void): void {
  if (clickhouseProblem) describe.skip(`${name} (skipped: ClickHouse unreachable at ${CLICKHOUSE_URL}: ${clickhouseProblem})`, suite);
  else describe(name, suite);
}

/**
 * The relational engines, and the events in ClickHouse: `clickhouse` keeps the records on
 * SQLite, `postgres+clickhouse` on PostgreSQL (the production layout).
 */
export type TestEngine = Engine | 'clickhouse' | 'postgres+clickhouse';

/** Whether this run keeps its events in ClickHouse. */
export const eventsOnClickHouse = (engine: TestEngine): boolean => engine === 'clickhouse' || engine === 'postgres+clickhouse';

/** The engine that keeps accounts, websites and the rest in this run. */
export const recordsEngine = (engine: TestEngine): Engine => (engine === 'postgres+clickhouse' ? 'postgres' : engine === 'clickhouse' ? 'sqlite' : engine);

/** A ClickHouse database of the suite's own (CLICKHOUSE_URL for the app) and how to drop it. */
export function testClickHouseDatabase(): { url: string; drop: () => Promise<void> } {
  const database = `sl_test_${randomBytes(6).toString('hex')}`;
  return {
    url: `${CLICKHOUSE_URL}/${database}`,
    drop: async () => {
      const client = createClient({ url: CLICKHOUSE_URL });
      try {
        await client.command({ query: `DROP DATABASE IF EXISTS ${database}` });
      } finally {
        await client.close();
      }
    },
  };
}

/**
 * Registers the suite on SQLite, PostgreSQL and ClickHouse; a run that cannot happen says why.
 * `withPostgres` adds a fourth run, ClickHouse beside PostgreSQL, for the suites that prove the
 * production layout (ingestion, the reads, deletes).
 */
export function describeEachEventEngine(name: string, suite: (engine: TestEngine) => void, options: { withPostgres?: boolean } = {}): void {
  describe(`${name} [sqlite]`, () => suite('sqlite'));
  if (postgresProblem) {
    describe.skip(`${name} [postgres] (skipped: PostgreSQL unreachable at ${POSTGRES_URL}: ${postgresProblem})`, () => suite('postgres'));
  } else {
    describe(`${name} [postgres]`, () => suite('postgres'));
  }
  if (clickhouseProblem) {
    describe.skip(`${name} [clickhouse] (skipped: ClickHouse unreachable at ${CLICKHOUSE_URL}: ${clickhouseProblem})`, () => suite('clickhouse'));
  } else {
    describe(`${name} [clickhouse]`, () => suite('clickhouse'));
  }
  if (!options.withPostgres) return;
  const problem = postgresProblem ?? clickhouseProblem;
  if (problem) {
    describe.skip(`${name} [postgres+clickhouse] (skipped: ${problem})`, () => suite('postgres+clickhouse'));
  } else {
    describe(`${name} [postgres+clickhouse]`, () => suite('postgres+clickhouse'));
  }
}

/**
 * `it` for a test of the relational rollups (sessions, visitor days, day totals): the ClickHouse
 * run keeps none (it derives them from the raw events at read time), so there the test is not
 * registered at all rather than reported as skipped.
 */
export function itWithRelationalRollups(engine: TestEngine): typeof it {
  return eventsOnClickHouse(engine) ? ((() => {}) as unknown as typeof it) : it;
}
