import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kysely, SqliteDialect, type SqliteDatabase, type SqliteStatement } from 'kysely';
import pg from 'pg';
import { createDatabase } from '../src/db/database.ts';
import type { Database } from '../src/db/schema.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { openSqlite } from '../src/db/sqlite-driver.ts';
import { createAccountWithToken } from '../src/modules/account/account.service.ts';
import { deriveBacklog } from '../src/modules/analytics/rollup-backlog.ts';
import { EventWriter } from '../src/modules/events/event-writer.ts';
import { ingestEvent } from '../src/modules/events/ingest.service.ts';
import type { IngestEventInput } from '../src/modules/events/ingest.schemas.ts';
import { createWebsite } from '../src/modules/websites/websites.service.ts';
import { returningVisitorTraffic } from './visitor-traffic.ts';

// Where a returning visitor's event spends its database time, statement by statement (issue 39
// item 3, issue 38): `node bin/run-ts.js bench/ingest-statements.ts`. Returning-visitor requests
// (visitor-traffic.ts) go through ingestion's own code (ingestEvent, the group-committing
// EventWriter, INGEST_CONCURRENCY at a time, as the bench's connections send them), then the
// rollup deriver's fold (deriveBacklog, FOLD_EVENTS per transaction, as the deriver takes them);
// a warm-up of WARMUP_EVENTS first, so the visitors come back to rows that exist. Then the same
// number of events again, folded FOLD_SMALL per transaction: the two fold phases give the fold's
// fixed cost per transaction and its cost per event (wall time, the fold running alone).
//
// INGEST_DATABASE: unset, a SQLite file in a temporary folder; a postgres:// URL, a scratch schema
// there (dropped at the end). On SQLite every statement is timed at the driver (the CPU time
// better-sqlite3 takes for it: the machine may be shared); on PostgreSQL at the client (the wall
// time from sending it to its answer: the round trip and the server's work). The totals are
// printed per phase: statements and microseconds per event, and the costliest statements with
// their share. INGEST_EXPLAIN=1 prints the plan of each fold statement and flags the scans (with
// INGEST_EXPLAIN_ANALYZE=1 on PostgreSQL, EXPLAIN ANALYZE: each run once more, with its times). On
// PostgreSQL the schema's tables are analyzed after the warm-up (INGEST_ANALYZE=0: not).
// Settings: INGEST_EVENTS (default 20000), WARMUP_EVENTS (20000), INGEST_CONCURRENCY (32),
// FOLD_EVENTS (500), FOLD_SMALL (50), INGEST_TOP (25 statements shown per phase).

const setting = (name: string, fallback: number) => Number(process.env[name] || fallback);
const EVENTS = setting('INGEST_EVENTS', 20_000);
const WARMUP = setting('WARMUP_EVENTS', 20_000);
const CONCURRENCY = setting('INGEST_CONCURRENCY', 32);
const FOLD_EVENTS = setting('FOLD_EVENTS', 500);
const FOLD_SMALL = setting('FOLD_SMALL', 50);
const TOP = setting('INGEST_TOP', 25);
const EXPLAIN = process.env.INGEST_EXPLAIN === '1';
const POSTGRES_URL = /^postgres(ql)?:\/\//.test(process.env.INGEST_DATABASE ?? '') ? process.env.INGEST_DATABASE! : null;

interface Tally {
  calls: number;
  ms: number;
  rows: number;
}

/** Per phase, per statement text (long lists of placeholders folded into one). */
const tallies = new Map<string, Map<string, Tally>>();
/** Per statement text of the fold phases, its first SQL and parameters (for INGEST_EXPLAIN). */
const samples = new Map<string, { sql: string; parameters: readonly unknown[] }>();
let phase = 'setup';
let prepares = 0;
const seen = new WeakSet<object>();

const shape = (sql: string) =>
  sql
    .replace(/\s+/g, ' ')
    .replace(/\$\d+/g, '?')
    .replace(/(\?, )+\?/g, '?…')
    .replace(/(\(\?…\), )+\(\?…\)/g, '(?…)…')
    .slice(0, 220);

function tally(sql: string, parameters: readonly unknown[], ms: number, rows: number): void {
  let byStatement = tallies.get(phase);
  if (!byStatement) tallies.set(phase, (byStatement = new Map()));
  const key = shape(sql);
  const t = byStatement.get(key) ?? { calls: 0, ms: 0, rows: 0 };
  t.calls += 1;
  t.ms += ms;
  t.rows += rows;
  byStatement.set(key, t);
  if (phase.startsWith('fold') && !samples.has(key)) samples.set(key, { sql, parameters });
}

/** The connection with every statement timed (its prepares counted). */
function timed(database: SqliteDatabase): SqliteDatabase {
  return {
    close: () => database.close(),
    prepare: (sql: string): SqliteStatement => {
      const statement = database.prepare(sql);
      if (!seen.has(statement)) {
        seen.add(statement);
        prepares += 1;
      }
      const time = <T>(parameters: readonly unknown[], run: () => T, rows: (result: T) => number): T => {
        const t0 = process.cpuUsage();
        const result = run();
        const used = process.cpuUsage(t0);
        tally(sql, parameters, (used.user + used.system) / 1000, rows(result));
        return result;
      };
      return {
        reader: statement.reader,
        all: (parameters) => time(parameters, () => statement.all(parameters), (rows) => rows.length),
        run: (parameters) => time(parameters, () => statement.run(parameters), (result) => Number(result.changes)),
        iterate: (parameters) => statement.iterate(parameters),
      };
    },
  } as SqliteDatabase;
}

/** Every statement of every pooled PostgreSQL client timed from its sending to its answer (Kysely sends text and values, and awaits a promise). */
function timePostgresClients(): void {
  const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = prototype.query;
  prototype.query = function (this: unknown, ...args: unknown[]) {
    const [text, values, callback] = args;
    if (typeof text !== 'string' || typeof callback === 'function') return query.apply(this, args);
    const started = performance.now();
    return (query.apply(this, args) as Promise<pg.QueryResult>).then((result) => {
      tally(text, (values as unknown[] | undefined) ?? [], performance.now() - started, result.rowCount ?? result.rows.length);
      return result;
    });
  };
}

function report(name: string, events: number, wallMs: number, cpuMicros: number): number {
  const byStatement = tallies.get(name) ?? new Map<string, Tally>();
  const rows = [...byStatement.entries()].sort((a, b) => b[1].ms - a[1].ms);
  const totalMs = rows.reduce((sum, [, t]) => sum + t.ms, 0);
  const calls = rows.reduce((sum, [, t]) => sum + t.calls, 0);
  const clock = POSTGRES_URL ? 'wall' : 'CPU';
  console.log(`\n== ${name}: ${events} events, ${wallMs.toFixed(0)} ms wall, ${((cpuMicros / events)).toFixed(0)} us CPU/event (this thread), ` +
    `${((totalMs * 1000) / events).toFixed(0)} us ${clock}/event in statements, ${(calls / events).toFixed(2)} statements/event, ${rows.length} distinct`);
  for (const [sql, t] of rows.slice(0, TOP)) {
    console.log(`${((t.ms * 1000) / events).toFixed(1).padStart(7)} us/ev ${((100 * t.ms) / totalMs).toFixed(1).padStart(5)} % ${String(t.calls).padStart(6)}x ${String(t.rows).padStart(8)} rows  ${sql}`);
  }
  return calls;
}

/** The log's size, to count the pages a phase wrote (with INGEST_PRAGMAS=wal_autocheckpoint=0, nothing is copied out meanwhile). */
let walPath = '';
const walBytes = () => (walPath && existsSync(walPath) ? statSync(walPath).size : 0);

async function measure(name: string, events: number, work: () => Promise<void>): Promise<{ wall: number; calls: number }> {
  phase = name;
  const cpu = process.cpuUsage();
  const wal = walBytes();
  const started = performance.now();
  await work();
  const wall = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const calls = report(name, events, wall, used.user + used.system);
  if (walPath) console.log(`log grew by ${((walBytes() - wal) / 4120 / events).toFixed(2)} pages/event`);
  return { wall, calls };
}

/** The plan of each fold statement (PostgreSQL: EXPLAIN; SQLite: EXPLAIN QUERY PLAN), the scans flagged. */
async function explainFold(explain: (sql: string, parameters: readonly unknown[]) => Promise<string[]>): Promise<void> {
  console.log('\n== plans of the fold statements (a line marked !! reads a table whole)');
  for (const [key, { sql, parameters }] of samples) {
    if (!/^\s*(with|select|insert|update|delete)/i.test(sql)) continue;
    const lines = await explain(sql, parameters).catch((error: Error) => [`(no plan: ${error.message})`]);
    console.log(`\n${key}`);
    for (const line of lines) console.log(`${/Seq Scan|^SCAN (?!k\b|g\b|m\b|keyed|day_rows|profile_day_rows|scoped)/.test(line.trim()) ? '!!' : '  '} ${line}`);
  }
}

const dir = mkdtempSync(join(tmpdir(), 'sightline-ingest-statements-'));
const schema = `sl_bench_${randomBytes(6).toString('hex')}`;
let admin: pg.Client | null = null;
try {
  let url = `sqlite:${join(dir, 'bench.db')}`;
  if (POSTGRES_URL) {
    admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    url = POSTGRES_URL;
  }
  const setup = createDatabase(url, POSTGRES_URL ? { pgSchema: schema, pgPoolSize: CONCURRENCY } : {});
  await migrateToLatest(setup);
  const { token } = await createAccountWithToken(setup.kysely, 'statements@example.com', 'Statements');
  const account = await setup.kysely.selectFrom('accounts').select('id').where('email', '=', 'statements@example.com').executeTakeFirstOrThrow();
  const principal = { kind: 'token', tokenId: token, accountId: account.id, permissions: [], websiteIds: [] } as const;
  const website = await createWebsite(setup.kysely, principal as never, { domain: 'returning.example.com', timezone: 'Europe/Paris' } as never);

  let db: Kysely<Database>;
  let explain: (sql: string, parameters: readonly unknown[]) => Promise<string[]>;
  let close: () => Promise<void>;
  if (admin) {
    const planner = admin;
    timePostgresClients();
    db = setup.kysely;
    await planner.query(`set search_path = ${schema}`);
    explain = async (sql, parameters) => {
      const { rows } = await planner.query<{ 'QUERY PLAN': string }>(process.env.INGEST_EXPLAIN_ANALYZE ? `explain (analyze, summary) ${sql}` : `explain ${sql}`, [...parameters]);
      return rows.map((row) => row['QUERY PLAN']);
    };
    close = () => setup.close();
  } else {
    await setup.close();
    const path = join(dir, 'bench.db');
    walPath = `${path}-wal`;
    const { database, raw } = openSqlite(path, { flushedByCaller: true });
    // INGEST_PRAGMAS: pragmas to try on the connection, separated by ";" (cache_size=-65536;...).
    for (const pragma of (process.env.INGEST_PRAGMAS ?? '').split(';').filter(Boolean)) raw.pragma(pragma);
    db = new Kysely<Database>({ dialect: new SqliteDialect({ database: timed(database) }) });
    explain = async (sql, parameters) =>
      (raw.prepare(`explain query plan ${sql}`).all(...(parameters as unknown[])) as { detail: string }[]).map((row) => row.detail);
    close = () => db.destroy();
  }
  const writer = new EventWriter(db, { alertCooldownSeconds: 60, mailEnabled: false } as never);
  const next = returningVisitorTraffic({ trackingId: website.trackingId, domain: website.domain }, 1);
  const deps = { db, events: writer, eventLog: null as never, salts: null as never };

  const ingest = async (count: number) => {
    let sent = 0;
    const worker = async () => {
      while (sent < count) {
        sent += 1;
        const { body, headers } = next();
        await ingestEvent(deps, JSON.parse(body) as IngestEventInput, { address: '127.0.0.1', userAgent: headers['user-agent']!, country: undefined });
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  };
  const fold = (size: number) => async () => {
    while ((await db.transaction().execute((trx) => deriveBacklog(trx, website.id, size))) > 0);
  };

  await measure('warm-up ingestion', WARMUP, () => ingest(WARMUP));
  await measure('warm-up fold', WARMUP, fold(FOLD_EVENTS));
  // A server's tables have the statistics autovacuum keeps; a scratch schema filled seconds ago has
  // none, and its plans would be of tables with no rows (INGEST_ANALYZE=0 keeps it so).
  if (admin && process.env.INGEST_ANALYZE !== '0') {
    const { rows } = await admin.query<{ name: string }>('select tablename as name from pg_tables where schemaname = $1', [schema]);
    for (const { name } of rows) await admin.query(`analyze ${schema}.${name}`);
  }
  prepares = 0;
  await measure('ingestion', EVENTS, () => ingest(EVENTS));
  const ingestPrepares = prepares;
  prepares = 0;
  const large = await measure('fold', EVENTS, fold(FOLD_EVENTS));
  const foldPrepares = prepares;
  await measure('ingestion again', EVENTS, () => ingest(EVENTS));
  const small = await measure(`fold by ${FOLD_SMALL}`, EVENTS, fold(FOLD_SMALL));
  console.log(`\nstatements prepared anew (not in the connection's cache): ingestion ${ingestPrepares}, fold ${foldPrepares}`);
  // wall = folds × fixed + events × per event, at both sizes (the last fold of a phase is the empty one that ends it).
  const folds = (size: number) => Math.ceil(EVENTS / size) + 1;
  const fixed = (small.wall - large.wall) / (folds(FOLD_SMALL) - folds(FOLD_EVENTS));
  const perEvent = (large.wall - folds(FOLD_EVENTS) * fixed) / EVENTS;
  console.log(`fold: fixed ${fixed.toFixed(2)} ms per transaction, ${(perEvent * 1000).toFixed(0)} us per event beyond it; ` +
    `statements per fold of ${FOLD_EVENTS}: ${(large.calls / folds(FOLD_EVENTS)).toFixed(1)}, of ${FOLD_SMALL}: ${(small.calls / folds(FOLD_SMALL)).toFixed(1)}`);
  if (EXPLAIN) await explainFold(explain);
  await close();
} finally {
  if (admin) {
    await admin.query(`drop schema ${schema} cascade`).catch((error: Error) => console.error(`cleanup: ${error.message}`));
    await admin.end();
  }
  rmSync(dir, { recursive: true, force: true });
}
