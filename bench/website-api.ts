import { DateTime } from 'luxon';
import { BREAKDOWNS } from '../src/modules/analytics/breakdowns.ts';
import { type LoadResult, load } from './load.ts';

// The website API's reads over the time-series website (a million synthetic events over 30
// days by default): each read's latency with one client at a time, unfiltered and with two
// filters (each route's default range), and the overview and breakdowns over the last 30 whole
// days (the dashboard's default view), then whether long reads stall the server: four clients hammer breakdowns while one
// client each measures /healthz and an admin read.

export const READ_FILTERS = 'filter_country=US&filter_device=desktop';


export interface ReadLatency {
  path: string;
  filtered: boolean;
  /** Over the last 30 whole days of the website (the dashboard's default view) instead of the route's default range. */
  lastDays: boolean;
  /** Whole days of a dashboard-shaped read (30 or 7, ending today), with the filters it names (issue 39); absent for the reads above. */
  dashboard?: { days: number; filters: string };
  p50Ms: number;
  p99Ms: number;
  requests: number;
  failed: number;
}

export interface StallResult {
  hammer: { reqPerSec: number; requests: number; failed: number };
  healthz: LoadResult;
  admin: LoadResult;
}

export interface WebsiteApiResult {
  reads: ReadLatency[];
  stall: StallResult;
}

export interface WebsiteApiOptions {
  base: string;
  headers: Record<string, string>;
  websiteId: string;
  /** The website's zone, for the last 30 whole days. */
  timezone: string;
  funnelId: string;
  serverPid: number | undefined;
  seconds: number;
  warmupSeconds: number;
}

type Call = (method: string, url: string, headers: Record<string, string>, body?: unknown) => Promise<{ bytes: Buffer }>;

/** The funnel the reads ask about (the synthetic events visit /pricing and complete "signup"); its id. */
export async function createBenchFunnel(call: Call, base: string, headers: Record<string, string>, websiteId: string): Promise<string> {
  const funnel = await call('POST', `${base}/api/v1/admin/websites/${websiteId}/funnels`, headers, {
    name: 'Signup',
    steps: [
      { type: 'pageview', url: '/pricing' },
      { type: 'goal', goalName: 'signup' },
    ],
  });
  return (JSON.parse(funnel.bytes.toString()) as { data: { id: string }[] }).data[0]!.id;
}

/** The last `days` local days of `timezone`, today included, as the dashboard asks for them. */
export function last30Days(timezone: string, days = 30): string {
  const today = DateTime.now().setZone(timezone).startOf('day');
  return `startAt=${today.minus({ days: days - 1 }).toISODate()}&endAt=${today.toISODate()}`;
}

/** One filter on each dimension the synthetic data varies, as a click on a row of the dashboard adds it. */
export const ONE_FILTER_EACH = ['filter_country=US', 'filter_device=mobile', 'filter_browser=Safari', 'filter_os=Windows', 'filter_page=/pricing'];

type ReadPath = { path: string; filtered: boolean; lastDays: boolean; dashboard?: { days: number; filters: string } };

/**
 * Reads made the way the dashboard makes them after a click on a row (issue 39): over the last 30
 * whole days, the overview and every breakdown with one filter and with two; the overview and the
 * pages with one filter on each dimension; and over the last 7 days (the date picker's other
 * common range) the overview and the pages with one filter.
 */
function dashboardPaths(site: string, breakdowns: string[], timezone: string): ReadPath[] {
  const read = (path: string, days: number, filters: string): ReadPath => ({ path: `${path}?${site}&${last30Days(timezone, days)}&${filters}`, filtered: true, lastDays: false, dashboard: { days, filters } });
  const overview = '/api/v1/analytics/overview';
  const pages = '/api/v1/analytics/pages';
  return [
    ...[overview, ...breakdowns].flatMap((path) => [read(path, 30, 'filter_country=US'), read(path, 30, READ_FILTERS)]),
    ...ONE_FILTER_EACH.slice(1).flatMap((filter) => [read(overview, 30, filter), read(pages, 30, filter)]),
    read(overview, 7, 'filter_country=US'),
    read(pages, 7, 'filter_country=US'),
  ];
}

function readPaths(websiteId: string, funnelId: string, timezone: string): ReadPath[] {
  const site = `websiteId=${websiteId}`;
  const breakdowns = BREAKDOWNS.map((kind) => `/api/v1/analytics/${kind}`);
  const plain = ['/api/v1/analytics/overview', ...breakdowns, `/api/v1/analytics/funnels/${funnelId}`, '/api/v1/visitors'];
  const defaults = plain.flatMap((path) => [
    { path: `${path}?${site}`, filtered: false, lastDays: false },
    { path: `${path}?${site}&${READ_FILTERS}`, filtered: true, lastDays: false },
  ]);
  const lastDays = ['/api/v1/analytics/overview', ...breakdowns].map((path) => ({ path: `${path}?${site}&${last30Days(timezone)}`, filtered: false, lastDays: true }));
  // The hourly series of the last 24 hours (the default), unfiltered: in the website's zone from
  // the hour rollups, in a zone half an hour off UTC from the same hours' raw events (issue 38).
  const series = `/api/v1/analytics/timeseries?${site}&fields=visitors,sessions,pageviews,conversion_rate&interval=hour`;
  const hourly = [series, `${series}&timezone=Asia/Kolkata`].map((path) => ({ path, filtered: false, lastDays: false }));
  return [...hourly, ...defaults, ...lastDays, ...dashboardPaths(site, breakdowns, timezone)];
}

/** Sequential requests for `seconds`, and at least MIN_SAMPLES of them: reads may take seconds. */
const MIN_SAMPLES = 3;
const MAX_SAMPLES = 500;

/** The p-th percentile (nearest rank) of ascending numbers; 0 for none. */
export function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function sample(url: string, headers: Record<string, string>, seconds: number): Promise<Omit<ReadLatency, 'path' | 'filtered' | 'lastDays' | 'dashboard'>> {
  await (await fetch(url, { headers })).arrayBuffer(); // warm-up: plans, caches
  const times: number[] = [];
  let failed = 0;
  const end = performance.now() + seconds * 1000;
  while ((performance.now() < end || times.length < MIN_SAMPLES) && times.length < MAX_SAMPLES) {
    const started = performance.now();
    const response = await fetch(url, { headers });
    await response.arrayBuffer();
    if (response.status !== 200) failed += 1;
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50Ms: percentile(times, 50), p99Ms: percentile(times, 99), requests: times.length, failed };
}

/** `clients` loops of back-to-back requests until `seconds` pass; answers completed requests per second and failures. */
async function hammer(url: string, headers: Record<string, string>, seconds: number, clients: number) {
  const end = performance.now() + seconds * 1000;
  const started = performance.now();
  let done = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < end) {
        const response = await fetch(url, { headers });
        await response.arrayBuffer();
        if (response.status === 200) done += 1;
        else failed += 1;
      }
    }),
  );
  return { reqPerSec: done / ((performance.now() - started) / 1000), requests: done, failed };
}

export async function benchWebsiteApi(options: WebsiteApiOptions): Promise<WebsiteApiResult> {
  const reads: ReadLatency[] = [];
  for (const { path, filtered, lastDays, dashboard } of readPaths(options.websiteId, options.funnelId, options.timezone)) {
    const result = await sample(`${options.base}${path}`, options.headers, options.seconds);
    reads.push({ path: path.replace(/websiteId=\w+&?/, '').replace(/\?$/, ''), filtered, lastDays, ...(dashboard ? { dashboard } : {}), ...result });
    console.error(`  ${path.slice(0, 90)}: p50 ${result.p50Ms.toFixed(1)} ms, p99 ${result.p99Ms.toFixed(1)} ms`);
  }
  const seconds = Math.max(options.seconds * 2, 5);
  const busyUrl = `${options.base}/api/v1/analytics/pages?websiteId=${options.websiteId}&${READ_FILTERS}`;
  const [busy, healthz, admin] = await Promise.all([
    hammer(busyUrl, options.headers, seconds, 4),
    load({ url: `${options.base}/healthz`, headers: {}, seconds, warmupSeconds: 0, connections: 1 }),
    load({ url: `${options.base}/api/v1/admin/websites/${options.websiteId}`, headers: options.headers, seconds, warmupSeconds: 0, connections: 1 }),
  ]);
  return { reads, stall: { hammer: busy, healthz, admin } };
}
