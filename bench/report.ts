import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ClickHouseBenchResult } from './clickhouse.ts';
import { printSampling } from './clickhouse-sampling.ts';
import type { IngestionResult } from './ingestion.ts';
import { RETURNING_SHAPE } from './visitor-traffic.ts';
import type { LoadResult } from './load.ts';
import type { TimeseriesResult } from './timeseries.ts';
import type { BackgroundWorkResult } from './background-work.ts';
import { READ_FILTERS, type ReadLatency, type WebsiteApiResult, percentile } from './website-api.ts';

// The printed tables and the JSON file.

export interface EngineResult {
  engine: string;
  path: string;
  sightline: LoadResult;
  bare: LoadResult;
  /** Sightline req/s divided by bare req/s. */
  ratio: number;
}

/** The targets, checked on every run. */
export const TARGETS = { adminRatio: 0.5, ingestionRatio: 0.3, seriesP50Ms: 50, readP50Ms: 50, readP99Ms: 200, stallP99Ms: 20, clickhouseP50Ms: 500, zoneAnswerMs: 1000, returningEventsPerSec: 2500, catchUpSeconds: 10 };

export interface Report {
  date: string;
  node: string;
  command: string;
  settings: {
    durationSeconds: number;
    warmupSeconds: number;
    connections: number;
    ingestConnections: number;
    parts: string[];
    seriesEvents: number;
    seriesConnections: number;
    readSeconds: number;
    zoneLoadSeconds: number;
  };
  targets: typeof TARGETS;
  engines: EngineResult[];
  ingestion: IngestionResult[];
  timeseries: TimeseriesResult[];
  /** The website API's reads with the events on ClickHouse (BENCH_PARTS=clickhouse). */
  clickhouse?: ClickHouseBenchResult;
  skipped: { engine: string; reason: string }[];
}

const COLUMNS = ['engine', 'target', 'req/s', 'p50 ms', 'p99 ms', 'Sightline/bare', 'failed', 'server CPU us/req'];
const WIDTHS = [9, 10, 10, 8, 8, 15, 7, 18];

function row(cells: string[], widths = WIDTHS): string {
  return cells.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
}

function line(engine: string, target: string, result: LoadResult, ratio: string): string {
  const failed = String(result.non2xx + result.errors);
  const cpu = result.serverCpuUsPerRequest === null ? 'n/a' : result.serverCpuUsPerRequest.toFixed(1);
  return row([engine, target, result.reqPerSec.toFixed(0), result.p50Ms.toFixed(2), result.p99Ms.toFixed(2), ratio, failed, cpu]);
}

const percent = (ratio: number) => `${(ratio * 100).toFixed(1)} %`;
const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');

function printPairs(title: string, results: { engine: string; sightline: LoadResult; bare: LoadResult; ratio: number }[]) {
  console.log('');
  console.log(title);
  console.log(row(COLUMNS));
  for (const result of results) {
    console.log(line(result.engine, 'sightline', result.sightline, percent(result.ratio)));
    console.log(line(result.engine, 'bare', result.bare, ''));
  }
}

const SERIES_COLUMNS = ['engine', 'events', 'req/s', 'p50 ms', 'p99 ms', 'failed', 'server CPU us/req', 'seed s', 'rollups s'];
const SERIES_WIDTHS = [9, 10, 10, 8, 8, 7, 18, 7, 10];

export function printReport(report: Report): void {
  const { durationSeconds, warmupSeconds, connections, ingestConnections, seriesConnections } = report.settings;
  console.log('');
  console.log(`command: ${report.command}`);
  console.log(`node ${report.node}; autocannon, ${durationSeconds} s after a ${warmupSeconds} s warm-up`);
  if (report.engines.length > 0) {
    printPairs(`request: GET ${report.engines[0]!.path} (authenticated, full-access token), ${connections} connections`, report.engines);
    for (const result of report.engines) {
      console.log(`${result.engine}: admin read ${percent(result.ratio)} of bare, target >= ${percent(TARGETS.adminRatio)}: ${verdict(result.ratio >= TARGETS.adminRatio)}`);
    }
  }
  for (const shape of ['fresh', 'returning'] as const) {
    const results = report.ingestion.filter((result) => result.shape === shape);
    if (results.length === 0) continue;
    const who =
      shape === 'fresh'
        ? "a fresh visitor's pageview per request"
        : `returning visitors: ${RETURNING_SHAPE.visitors} drawn skewed, sessions of ${RETURNING_SHAPE.pagesPerSession} pages over ${RETURNING_SHAPE.paths} paths (long tail), 7 referrers, 5 browsers and devices, ${percent(RETURNING_SHAPE.campaignShare)} with a campaign, ${percent(RETURNING_SHAPE.goalShare)} goals`;
    printPairs(`ingestion: POST ${results[0]!.path} (${who}; one event per request, so req/s = events/s), ${ingestConnections} connections`, results);
    for (const result of results) {
      console.log(
        `${result.engine}: ${result.stored} events stored; ${result.waitingAtEnd} waited for their rollups when the load ended, derived by the stop in ${result.drainSeconds.toFixed(2)} s`,
      );
      console.log(
        `${result.engine}: ingestion ${percent(result.ratio)} of bare while loaded, ${percent(result.sustainedRatio)} over the load and that drain, target >= ${percent(TARGETS.ingestionRatio)}: ${verdict(result.sustainedRatio >= TARGETS.ingestionRatio)}`,
      );
      if (shape === 'returning') {
        const perSec = result.sightline.reqPerSec;
        console.log(
          `${result.engine}: returning visitors at ${perSec.toFixed(0)} events/s, target >= ${TARGETS.returningEventsPerSec} (issue 39, SQLite): ${verdict(perSec >= TARGETS.returningEventsPerSec)}; derived data caught up ${result.drainSeconds.toFixed(2)} s after the load, target <= ${TARGETS.catchUpSeconds} s: ${verdict(result.drainSeconds <= TARGETS.catchUpSeconds)}`,
        );
      }
    }
  }
  if (report.timeseries.length > 0) {
    const first = report.timeseries[0]!;
    console.log('');
    console.log(`time series: GET ${first.path} (the default 30 days), ${seriesConnections} connection(s)`);
    console.log(row(SERIES_COLUMNS, SERIES_WIDTHS));
    for (const r of report.timeseries) {
      const cpu = r.series.serverCpuUsPerRequest === null ? 'n/a' : r.series.serverCpuUsPerRequest.toFixed(1);
      const cells = [r.engine, String(r.events), r.series.reqPerSec.toFixed(0), r.series.p50Ms.toFixed(2), r.series.p99Ms.toFixed(2)];
      cells.push(String(r.series.non2xx + r.series.errors), cpu, r.seedSeconds.toFixed(1), r.rebuildSeconds.toFixed(1));
      console.log(row(cells, SERIES_WIDTHS));
    }
    for (const r of report.timeseries) {
      console.log(`${r.engine}: ${r.events} events and ${r.payments} payments over ${r.days} days; 30-day p50 ${r.series.p50Ms.toFixed(2)} ms, target < ${TARGETS.seriesP50Ms} ms: ${verdict(r.series.p50Ms < TARGETS.seriesP50Ms)}`);
    }
  }
  for (const r of report.timeseries) if (r.websiteApi) printWebsiteApi(r.engine, r.events, r.websiteApi);
  for (const r of report.timeseries) if (r.derivedBuild) printDerivedBuild(r.engine, r.events, r.derivedBuild);
  for (const r of report.timeseries) if (r.timezoneChange) printTimezoneChange(r.engine, r.events, r.timezoneChange);
  if (report.clickhouse) printClickHouse(report.clickhouse);
  for (const { engine, reason } of report.skipped) console.log(`${engine}: skipped (${reason})`);
}

/** Issue 33: /healthz and an admin read keep p99 <= 20 ms while background work runs. */
function printLoadsMeanwhile(r: BackgroundWorkResult): void {
  for (const [name, load] of [['/healthz', r.healthz], ['admin read', r.adminRead]] as const) {
    const ok = load.p99Ms <= TARGETS.stallP99Ms && load.non2xx + load.errors === 0;
    console.log(`  ${name} meanwhile: p50 ${load.p50Ms.toFixed(2)} ms, p99 ${load.p99Ms.toFixed(2)} ms over ${load.requests} requests (target p99 <= ${TARGETS.stallP99Ms} ms: ${verdict(ok)})`);
  }
}

/** Issue 33: a time-zone change answers within 1 s; the move that follows does not stall the server. */
function printTimezoneChange(engine: string, events: number, r: BackgroundWorkResult): void {
  console.log('');
  console.log(`${engine}: time-zone change at ${events} events: answered in ${r.answerMs.toFixed(0)} ms (target < ${TARGETS.zoneAnswerMs} ms: ${verdict(r.answerMs < TARGETS.zoneAnswerMs)}); the days moved in ${r.seconds.toFixed(1)} s`);
  printLoadsMeanwhile(r);
}

/** Issue 33: a build of every derived table (after an upgrade, or a repair) does not stall the server. */
function printDerivedBuild(engine: string, events: number, r: BackgroundWorkResult): void {
  console.log('');
  console.log(`${engine}: build of every derived table at ${events} events, in the background: recorded in ${r.answerMs.toFixed(0)} ms, built in ${r.seconds.toFixed(1)} s (the worker's first look included, at most 5 s)`);
  printLoadsMeanwhile(r);
}

const READ_COLUMNS = ['engine', 'read', 'filtered', 'p50 ms', 'p99 ms', 'requests', 'target'];
// 'filtered': yes, no, '30 days' (unfiltered, over the last 30 whole days), or a dashboard-shaped
// read's days and filters ('30d country=US,device=desktop').
const READ_WIDTHS = [9, 40, 34, 8, 8, 9, 7];

const readParams = (read: ReadLatency) =>
  read.dashboard ? `${read.dashboard.days}d ${read.dashboard.filters.replaceAll('filter_', '').replace('&', ',')}` : read.lastDays ? '30 days' : read.filtered ? 'yes' : 'no';

/** ClickHouse's own target: overview and every breakdown at p50 <= 500 ms over 100 M events. */
function printClickHouse(result: ClickHouseBenchResult): void {
  console.log('');
  console.log(`clickhouse: ${result.events} events written in ${result.seedSeconds.toFixed(1)} s, ${(result.bytesOnDisk / 2 ** 30).toFixed(2)} GiB on disk`);
  console.log(`clickhouse: event and session rollups built from them at the next start in ${result.rollupBuildSeconds.toFixed(1)} s, ${(result.rollupBytesOnDisk / 2 ** 30).toFixed(2)} GiB on disk`);
  const within = (read: ReadLatency) => read.requests > 0 && read.p50Ms <= TARGETS.clickhouseP50Ms;
  if (result.websiteApi) {
    printWebsiteApi('clickhouse', result.events, result.websiteApi, { within, label: `p50 <= ${TARGETS.clickhouseP50Ms} ms` });
    const targeted = result.websiteApi.reads.filter((read) => !read.lastDays && !read.dashboard && !read.path.includes('/funnels/') && !read.path.startsWith('/api/v1/visitors'));
    const met = targeted.filter(within).length;
    console.log(`clickhouse: ${met} of ${targeted.length} overview and breakdown reads (filtered and not) at p50 <= ${TARGETS.clickhouseP50Ms} ms: ${verdict(met === targeted.length)}`);
  }
  printSampling(result.sampling);
}

const RELATIONAL_READ_TARGET = {
  within: (read: ReadLatency) => read.requests > 0 && read.p50Ms <= TARGETS.readP50Ms && read.p99Ms <= TARGETS.readP99Ms,
  label: `p50 <= ${TARGETS.readP50Ms} ms and p99 <= ${TARGETS.readP99Ms} ms`,
};

/** The reads' table; `target` is what each row's verdict checks (ClickHouse has its own, at 100 M events). */
function printWebsiteApi(engine: string, events: number, result: WebsiteApiResult, target = RELATIONAL_READ_TARGET): void {
  const { within, label } = target;
  console.log('');
  console.log(`website API reads, ${engine}, ${events} events, one client at a time (filtered: ${READ_FILTERS}; target: ${label})`);
  console.log(row(READ_COLUMNS, READ_WIDTHS));
  for (const read of result.reads) {
    const ok = within(read);
    const cells = [engine, read.path.split('?')[0]!.replace('/api/v1/', ''), readParams(read), read.p50Ms.toFixed(1), read.p99Ms.toFixed(1), String(read.requests), verdict(ok)];
    console.log(row(cells, READ_WIDTHS));
  }
  const defaults = result.reads.filter((read) => !read.lastDays && !read.dashboard);
  const lastDays = result.reads.filter((read) => read.lastDays);
  const dashboard = result.reads.filter((read) => read.dashboard);
  console.log(`${engine}: ${defaults.filter(within).length} of ${defaults.length} reads within ${label}`);
  console.log(`${engine}: over the last 30 whole days (unfiltered), ${lastDays.filter(within).length} of ${lastDays.length} reads within the same target`);
  if (dashboard.length > 0) {
    const sorted = dashboard.map((read) => read.p50Ms).sort((a, b) => a - b);
    console.log(
      `${engine}: filtered over whole days as the dashboard asks (issue 39), ${dashboard.filter(within).length} of ${dashboard.length} reads within the same target; ` +
        `p50 median ${percentile(sorted, 50).toFixed(1)} ms, worst ${sorted.at(-1)!.toFixed(1)} ms`,
    );
  }
  const { hammer, healthz, admin } = result.stall;
  console.log(
    `${engine}: while 4 clients hammer a filtered breakdown (${hammer.requests} answered, ${hammer.reqPerSec.toFixed(2)} req/s): ` +
      `/healthz p99 ${healthz.p99Ms.toFixed(1)} ms, admin read p99 ${admin.p99Ms.toFixed(1)} ms, target <= ${TARGETS.stallP99Ms} ms: ` +
      verdict(healthz.p99Ms <= TARGETS.stallP99Ms && admin.p99Ms <= TARGETS.stallP99Ms),
  );
}

export function writeReport(file: string, report: Report): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
}
