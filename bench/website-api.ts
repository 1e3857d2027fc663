import { type LoadResult, load } from './load.ts';

// The website API's reads over the time-series website (a million synthetic events over 30
// days by default): each read's latency with one client at a time, unfiltered and with two
// filters, then whether long reads stall the server: four clients hammer breakdowns while one
// client each measures /healthz and an admin read.

export const READ_FILTERS = 'filter_country=US&filter_device=desktop';

const BREAKDOWNS = [
  'pages',
  'entry-pages',
  'exit-pages',
  'referrers',
  'campaigns',
  'countries',
  'regions',
  'cities',
  'devices',
  'browsers',
  'operating-systems',
  'hostnames',
  'goals',
  'exit-clicks',
];

export interface ReadLatency {
  path: string;
  filtered: boolean;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  failed: number;
}

export interface StallResult {
  hammer: LoadResult;
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
  funnelId: string;
  serverPid: number | undefined;
  seconds: number;
  warmupSeconds: number;
}

function readPaths(websiteId: string, funnelId: string): { path: string; filtered: boolean }[] {
  const site = `websiteId=${websiteId}`;
  const plain = [
    '/api/v1/analytics/overview',
    ...BREAKDOWNS.map((kind) => `/api/v1/analytics/${kind}`),
    `/api/v1/analytics/funnels/${funnelId}`,
    '/api/v1/visitors',
  ];
  return plain.flatMap((path) => [
    { path: `${path}?${site}`, filtered: false },
    { path: `${path}?${site}&${READ_FILTERS}`, filtered: true },
  ]);
}

export async function benchWebsiteApi(options: WebsiteApiOptions): Promise<WebsiteApiResult> {
  const reads: ReadLatency[] = [];
  for (const { path, filtered } of readPaths(options.websiteId, options.funnelId)) {
    const result = await load({
      url: `${options.base}${path}`,
      headers: options.headers,
      seconds: options.seconds,
      warmupSeconds: Math.min(1, options.warmupSeconds),
      connections: 1,
    });
    reads.push({ path: path.replace(/websiteId=\w+&?/, '').replace(/\?$/, ''), filtered, p50Ms: result.p50Ms, p99Ms: result.p99Ms, requests: result.requests, failed: result.non2xx + result.errors });
    console.error(`  ${path.slice(0, 90)}: p50 ${result.p50Ms.toFixed(1)} ms, p99 ${result.p99Ms.toFixed(1)} ms`);
  }
  const seconds = Math.max(options.seconds * 2, 5);
  const [hammer, healthz, admin] = await Promise.all([
    load({ url: `${options.base}/api/v1/analytics/pages?websiteId=${options.websiteId}&${READ_FILTERS}`, headers: options.headers, seconds, warmupSeconds: 0, connections: 4, serverPid: options.serverPid }),
    load({ url: `${options.base}/healthz`, headers: {}, seconds, warmupSeconds: 0, connections: 1 }),
    load({ url: `${options.base}/api/v1/admin/websites/${options.websiteId}`, headers: options.headers, seconds, warmupSeconds: 0, connections: 1 }),
  ]);
  return { reads, stall: { hammer, healthz, admin } };
}
