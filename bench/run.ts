import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Engine } from '../src/db/database.ts';
import { call } from './call.ts';
import { startChild } from './children.ts';
import { benchIngestion } from './ingestion.ts';
import { failures, load } from './load.ts';
import { type BenchDatabase, postgresProblem, prepareDatabase } from './prepare.ts';
import { benchScratch } from './scratch.ts';
import { type EngineResult, type Report, TARGETS, printReport, writeReport } from './report.ts';
import { benchClickHouse } from './clickhouse.ts';
import { benchTimeseries } from './timeseries.ts';

// `npm run bench`: the real Sightline server against a bare node:http server answering the same
// bytes, on SQLite and (when reachable) PostgreSQL, in three parts: an authenticated admin read
// (admin), event ingestion through POST /api/events (ingestion: a fresh visitor per request;
// ingestion-returning: returning visitors with sessions of several pages, bench/visitor-traffic.ts), and the 30-day daily time
// series over a million synthetic events (timeseries). Servers run in child processes;
// autocannon runs here. Settings: BENCH_DURATION (s, default 10), BENCH_CONNECTIONS (default
// 10; the admin read), BENCH_INGEST_CONNECTIONS (default 32; ingestion), BENCH_WARMUP (s, default 2), BENCH_ENGINES (default "sqlite,postgres"), BENCH_PARTS
// (default "admin,ingestion,ingestion-returning,timeseries,website-api,build,timezone": the website API's reads over the
// time series' website, each for BENCH_READ_SECONDS, default 3; then a build of its derived tables
// in the background and a change of its time zone, each with /healthz and an admin read loaded for
// BENCH_TZ_LOAD_SECONDS, default 900, or until it ends),
// BENCH_SERIES_EVENTS (default 1000000),
// BENCH_SERIES_CONNECTIONS (default 1: latency of one request at a time),
// BENCH_CPU_PROF=1 (write a .cpuprofile of each Sightline child into bench/results/profiles/).
// BENCH_PARTS=clickhouse (not in the default): the same reads with the events on ClickHouse
// (bench/clickhouse.ts), over BENCH_CLICKHOUSE_EVENTS (default 100000000).

const PATH = '/api/v1/admin/websites/{id}';
const RESULTS = resolve('bench/results/latest.json');

function setting(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number >= 0, got "${raw}"`);
  return value;
}

const settings = {
  durationSeconds: setting('BENCH_DURATION', 10),
  warmupSeconds: setting('BENCH_WARMUP', 2),
  connections: setting('BENCH_CONNECTIONS', 10),
  ingestConnections: setting('BENCH_INGEST_CONNECTIONS', 32),
  parts: (process.env.BENCH_PARTS || 'admin,ingestion,ingestion-returning,timeseries,website-api,build,timezone').split(','),
  readSeconds: setting('BENCH_READ_SECONDS', 3),
  seriesEvents: setting('BENCH_SERIES_EVENTS', 1_000_000),
  seriesConnections: setting('BENCH_SERIES_CONNECTIONS', 1),
  clickhouseEvents: setting('BENCH_CLICKHOUSE_EVENTS', 100_000_000),
  zoneLoadSeconds: setting('BENCH_TZ_LOAD_SECONDS', 900),
};
const profile = process.env.BENCH_CPU_PROF === '1';
const nodeArgs = profile ? ['--cpu-prof', `--cpu-prof-dir=${resolve('bench/results/profiles')}`] : [];
const engines = (process.env.BENCH_ENGINES || 'sqlite,postgres').split(',');
const scratch = benchScratch('sightline-bench-');
const { dir: tempDir, cleanup } = scratch;

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping servers and removing temporary data`);
    void cleanup().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  });
}

async function benchAdminRead(engine: Engine, database: BenchDatabase): Promise<EngineResult> {
  const headers = { authorization: `Bearer ${database.token}` };
  const loadOptions = { headers, seconds: settings.durationSeconds, warmupSeconds: settings.warmupSeconds, connections: settings.connections };

  const serverEnv: Record<string, string> = { BENCH_DATABASE_URL: database.url, ...(database.pgSchema ? { BENCH_PG_SCHEMA: database.pgSchema } : {}) };
  const sightline = await startChild('bench/sightline-server.ts', serverEnv, nodeArgs);
  let captured: { bytes: Buffer; contentType: string };
  let path: string;
  let sightlineResult;
  try {
    const base = `http://127.0.0.1:${sightline.port}/api/v1/admin`;
    const created = await call('POST', `${base}/websites`, headers, { domain: 'bench.example.com', timezone: 'Europe/Paris', name: 'Bench' });
    const websiteId = (JSON.parse(created.bytes.toString()) as { data: { id: string }[] }).data[0]!.id;
    path = `/api/v1/admin/websites/${websiteId}`;
    captured = await call('GET', `http://127.0.0.1:${sightline.port}${path}`, headers);
    console.error(`${engine}: loading Sightline on port ${sightline.port}`);
    sightlineResult = await load({ url: `http://127.0.0.1:${sightline.port}${path}`, serverPid: sightline.child.pid, ...loadOptions });
  } finally {
    await sightline.stop();
  }

  const bodyFile = join(tempDir, `${engine}-body`);
  writeFileSync(bodyFile, captured.bytes);
  const bare = await startChild('bench/bare-server.ts', { BENCH_BODY_FILE: bodyFile, BENCH_CONTENT_TYPE: captured.contentType });
  let bareResult;
  try {
    const url = `http://127.0.0.1:${bare.port}${path}`;
    const echoed = await call('GET', url, headers);
    if (!echoed.bytes.equals(captured.bytes) || echoed.contentType !== captured.contentType) {
      throw new Error('the bare server does not answer the bytes Sightline answered');
    }
    console.error(`${engine}: loading bare node:http on port ${bare.port}`);
    bareResult = await load({ url, serverPid: bare.child.pid, ...loadOptions });
  } finally {
    await bare.stop();
  }
  return { engine, path: PATH, sightline: sightlineResult, bare: bareResult, ratio: sightlineResult.reqPerSec / bareResult.reqPerSec };
}

async function benchEngine(engine: Engine, report: Report): Promise<void> {
  const database = await prepareDatabase(engine, tempDir, scratch.onCleanup);
  const timing = { seconds: settings.durationSeconds, warmupSeconds: settings.warmupSeconds };
  if (settings.parts.includes('admin')) report.engines.push(await benchAdminRead(engine, database));
  for (const [part, shape] of [['ingestion', 'fresh'], ['ingestion-returning', 'returning']] as const) {
    if (!settings.parts.includes(part)) continue;
    report.ingestion.push(await benchIngestion(engine, database, { ...timing, shape, connections: settings.ingestConnections, tempDir, nodeArgs, call }));
  }
  if (['timeseries', 'website-api', 'build', 'timezone'].some((part) => settings.parts.includes(part))) {
    const websiteApi = settings.parts.includes('website-api') ? { seconds: settings.readSeconds } : null;
    const timezoneChange = settings.parts.includes('timezone') ? { loadSeconds: settings.zoneLoadSeconds } : null;
    const derivedBuild = settings.parts.includes('build') ? { loadSeconds: settings.zoneLoadSeconds } : null;
    const options = { ...timing, events: settings.seriesEvents, connections: settings.seriesConnections, nodeArgs, call, websiteApi, derivedBuild, timezoneChange };
    report.timeseries.push(await benchTimeseries(engine, database, options));
  }
  await database.drop();
}

function commandLine(): string {
  const env = Object.keys(process.env)
    .filter((name) => name.startsWith('BENCH_') && !name.startsWith('BENCH_DATABASE') && !name.startsWith('BENCH_BODY'))
    .map((name) => `${name}=${process.env[name]}`);
  const how = process.env.npm_lifecycle_event === 'bench' ? 'npm run bench' : 'node bin/run-ts.js bench/run.ts';
  return [...env, how].join(' ');
}

let exitCode = 0;
const report: Report = {
  date: new Date().toISOString(),
  node: process.version,
  command: commandLine(),
  settings,
  targets: TARGETS,
  engines: [],
  ingestion: [],
  timeseries: [],
  skipped: [],
};
try {
  if (settings.parts.includes('clickhouse')) {
    const database = await prepareDatabase('sqlite', tempDir, scratch.onCleanup);
    const timing = { seconds: settings.readSeconds, warmupSeconds: settings.warmupSeconds };
    report.clickhouse = await benchClickHouse(database, { ...timing, events: settings.clickhouseEvents, nodeArgs, call });
  }
  if (engines.includes('sqlite') && settings.parts.some((part) => part !== 'clickhouse')) await benchEngine('sqlite', report);
  const problem = engines.includes('postgres') ? await postgresProblem() : 'not in BENCH_ENGINES';
  if (problem) report.skipped.push({ engine: 'postgres', reason: problem });
  else await benchEngine('postgres', report);

  printReport(report);
  writeReport(RESULTS, report);
  console.log(`\nresults written to ${RESULTS}`);
  const loads = [...report.engines, ...report.ingestion]
    .flatMap((e) => [e.sightline, e.bare])
    .concat(report.timeseries.flatMap((r) => [r.series, ...(r.websiteApi ? [r.websiteApi.stall.healthz, r.websiteApi.stall.admin] : [])]));
  const busyFailures = report.timeseries.reduce((sum, r) => sum + (r.websiteApi?.stall.hammer.failed ?? 0), 0);
  if (busyFailures > 0) console.error(`FAILED: ${busyFailures} hammering read(s) failed`);
  const failedReads = report.timeseries.flatMap((r) => r.websiteApi?.reads ?? []).filter((read) => read.failed > 0);
  for (const read of failedReads) console.error(`FAILED: ${read.path}: ${read.failed} request(s) failed`);
  if (failedReads.length > 0) exitCode = 1;
  const failed = loads.reduce((sum, r) => sum + failures(r), 0) + busyFailures;
  if (failed > 0) {
    console.error(`FAILED: ${failed} request(s) failed (non-2xx answers or connection errors)`);
    exitCode = 1;
  }
  const lost = report.ingestion.filter((r) => r.stored < r.sightline.requests);
  for (const r of lost) console.error(`FAILED: ${r.engine}: ${r.sightline.requests} events answered but only ${r.stored} stored`);
  if (lost.length > 0) exitCode = 1;
} catch (error) {
  console.error(error);
  // What finished before the fault is still worth having (a ClickHouse part takes most of an hour).
  console.log('\nthe run stopped early; the parts that finished:');
  printReport(report);
  exitCode = 1;
} finally {
  await cleanup();
}
process.exit(exitCode);
