import { BUILT_TABLES } from '../src/modules/analytics/derived-tables.ts';
import { rebuildWebsite } from '../src/modules/analytics/maintainer.ts';
import { sql } from 'kysely';
import type { Engine } from '../src/db/database.ts';
import { createDatabase } from '../src/db/database.ts';
import { startChild } from './children.ts';
import { type LoadResult, load } from './load.ts';
import type { BenchDatabase } from './prepare.ts';
import { loadSyntheticEvents } from './synthetic-events.ts';
import { type BackgroundWorkResult, benchDerivedBuild, benchTimezoneChange } from './background-work.ts';
import { type WebsiteApiResult, benchWebsiteApi, createBenchFunnel } from './website-api.ts';

// The time series over a large website: synthetic events are written straight into the
// database and the day rollups built by the product's rebuild, then the 30-day daily series
// (every field) is loaded through HTTP on the real server.

export const SERIES_PATH = '/api/v1/analytics/timeseries?websiteId={id}&fields=visitors,sessions,pageviews,revenue,payments,conversion_rate&interval=day';
/** The seeded website's zone: the day rollups are built in it. */
export const SERIES_TIMEZONE = 'America/New_York';
const DAYS = 35;

export interface TimeseriesResult {
  engine: string;
  path: string;
  events: number;
  payments: number;
  visitorDays: number;
  days: number;
  seedSeconds: number;
  rebuildSeconds: number;
  connections: number;
  /** The answer's totals, to show the series really covers the data. */
  totals: Record<string, number>;
  series: LoadResult;
  /** The website API's reads over the same website, when that part runs. */
  websiteApi: WebsiteApiResult | null;
  /** The build part, when it runs: every derived table built again in the background. */
  derivedBuild: BackgroundWorkResult | null;
  /** The time-zone change part, when it runs. */
  timezoneChange: BackgroundWorkResult | null;
}

export interface TimeseriesOptions {
  events: number;
  connections: number;
  seconds: number;
  warmupSeconds: number;
  nodeArgs: string[];
  call: (method: string, url: string, headers: Record<string, string>, body?: unknown) => Promise<{ bytes: Buffer }>;
  /** Also measure the website API's reads (bench/website-api.ts) over the seeded website. */
  websiteApi: { seconds: number } | null;
  /** A build of every derived table in the background, with the server under load (bench/background-work.ts). */
  derivedBuild: { loadSeconds: number } | null;
  /** Last (it changes the zone): a time-zone change and the move that follows (bench/background-work.ts). */
  timezoneChange: { loadSeconds: number } | null;
}

/** Writes `events` synthetic events (over DAYS days) for a website in SERIES_TIMEZONE and builds its rollups. */
export async function seedSyntheticTraffic(database: BenchDatabase, websiteId: string, events: number) {
  let started = performance.now();
  const counts = await loadSyntheticEvents(database.engine, database.url, database.pgSchema, { websiteId, events, days: DAYS, now: Date.now() });
  const seedSeconds = (performance.now() - started) / 1000;

  started = performance.now();
  const db = createDatabase(database.url, database.pgSchema ? { pgSchema: database.pgSchema } : {});
  try {
    await db.kysely.transaction().execute(async (trx) => {
      // Every derived table the catalogue declares, as the product's own rebuild does (a table
      // named here by hand was left empty when a new one was added).
      await rebuildWebsite(trx, websiteId, SERIES_TIMEZONE);
    });
    // What autovacuum does some time after a bulk load, done now: statistics for the planner (or
    // the first reads are planned for the empty tables of before the load) and the visibility
    // map that lets index-only scans skip the table.
    if (database.engine === 'postgres') await sql`vacuum analyze events, payments, ${sql.join(BUILT_TABLES.map((table) => sql.table(table.name)))}`.execute(db.kysely);
  } finally {
    await db.close();
  }
  return { ...counts, seedSeconds, rebuildSeconds: (performance.now() - started) / 1000 };
}

export async function benchTimeseries(engine: Engine, database: BenchDatabase, options: TimeseriesOptions): Promise<TimeseriesResult> {
  const headers = { authorization: `Bearer ${database.token}` };
  const serverEnv: Record<string, string> = { BENCH_DATABASE_URL: database.url, ...(database.pgSchema ? { BENCH_PG_SCHEMA: database.pgSchema } : {}) };
  const sightline = await startChild('bench/sightline-server.ts', serverEnv, options.nodeArgs);
  try {
    const base = `http://127.0.0.1:${sightline.port}`;
    const created = await options.call('POST', `${base}/api/v1/admin/websites`, headers, { domain: 'series.bench.example.com', timezone: SERIES_TIMEZONE, name: 'Series' });
    const websiteId = (JSON.parse(created.bytes.toString()) as { data: { id: string }[] }).data[0]!.id;
    // Before the events: a funnel created after them would start a build of the website's derived
    // data (its crossings, analytics/funnel-crossings.ts), and the reads would answer raw meanwhile.
    const funnelId = options.websiteApi ? await createBenchFunnel(options.call, base, headers, websiteId) : '';
    console.error(`${engine}: writing ${options.events} synthetic events and rebuilding the rollups`);
    const seeded = await seedSyntheticTraffic(database, websiteId, options.events);
    console.error(`${engine}: seeded in ${seeded.seedSeconds.toFixed(1)} s, rollups rebuilt in ${seeded.rebuildSeconds.toFixed(1)} s`);

    const url = `${base}${SERIES_PATH.replace('{id}', websiteId)}`;
    const probe = JSON.parse((await options.call('GET', url, headers)).bytes.toString()) as { data: unknown[]; totals: Record<string, number> };
    if (probe.data.length !== 30 || !(probe.totals.pageviews! > 0)) throw new Error(`unexpected series: ${JSON.stringify(probe).slice(0, 500)}`);
    console.error(`${engine}: loading the 30-day daily series on port ${sightline.port}`);
    const series = await load({
      url,
      headers,
      seconds: options.seconds,
      warmupSeconds: options.warmupSeconds,
      connections: options.connections,
      serverPid: sightline.child.pid,
    });
    let websiteApi: WebsiteApiResult | null = null;
    if (options.websiteApi) {
      console.error(`${engine}: the website API's reads`);
      websiteApi = await benchWebsiteApi({
        base,
        headers,
        websiteId,
        timezone: SERIES_TIMEZONE,
        funnelId,
        serverPid: sightline.child.pid,
        seconds: options.websiteApi.seconds,
        warmupSeconds: options.warmupSeconds,
      });
    }
    const background = (loadSeconds: number) => ({ base, headers, websiteId, serverPid: sightline.child.pid, loadSeconds, call: options.call });
    let derivedBuild: BackgroundWorkResult | null = null;
    if (options.derivedBuild) {
      console.error(`${engine}: a build of every derived table, and /healthz and an admin read while it runs`);
      derivedBuild = await benchDerivedBuild(background(options.derivedBuild.loadSeconds), database);
    }
    let timezoneChange: BackgroundWorkResult | null = null;
    if (options.timezoneChange) {
      console.error(`${engine}: a time-zone change, and /healthz and an admin read while its move runs`);
      timezoneChange = await benchTimezoneChange(background(options.timezoneChange.loadSeconds));
    }
    return {
      websiteApi,
      derivedBuild,
      timezoneChange,
      engine,
      path: SERIES_PATH,
      events: seeded.events,
      payments: seeded.payments,
      visitorDays: seeded.visitorDays,
      days: DAYS,
      seedSeconds: seeded.seedSeconds,
      rebuildSeconds: seeded.rebuildSeconds,
      connections: options.connections,
      totals: probe.totals,
      series,
    };
  } finally {
    await sightline.stop();
  }
}
