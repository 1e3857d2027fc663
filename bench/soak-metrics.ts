import { exchange } from './soak-schedule.ts';

// What the server says about itself, read from its GET /metrics (the Prometheus text) at the end
// of every window. The event-loop gauges start a new period at each scrape, so each reading
// covers the window just ended. The loop delay is bench/sightline-server.ts's 1-ms gauge;
// prom-client's own (10-ms sampling, reported as the whole interval) is kept beside it with the
// 10 ms taken off.

export interface ServerReading {
  /** Event-loop delay beyond a 1-ms timer over the window (ms). */
  loopDelayMs: { p50: number; p99: number; max: number };
  /** prom-client's nodejs_eventloop_lag_* over the window, minus its 10-ms sampling interval (ms). */
  promLoopDelayMs: { p50: number; p99: number; max: number };
  rssBytes: number;
  heapUsedBytes: number;
  heapTotalBytes: number;
  externalBytes: number;
  /** Events accepted since the server started (browser, server-side goals, payments). */
  eventsAccepted: number;
  eventsDropped: number;
  rollupBacklog: number;
  /** PostgreSQL only: queries waiting for a pooled connection at the scrape. */
  poolWaiting: number | null;
  /** Per analytics route, since the server started: reads served, seconds held in a read slot, seconds waited for one. */
  reads: Record<string, ReadSlotTotals>;
}

export interface ReadSlotTotals {
  count: number;
  serviceSeconds: number;
  waitSeconds: number;
}

/** The analytics reads' slot histograms (src/plugins/analytics-reads.ts): count and sums per route. */
function readSlots(values: Map<string, number>): Record<string, ReadSlotTotals> {
  const reads: Record<string, ReadSlotTotals> = {};
  const of = (route: string) => (reads[route] ??= { count: 0, serviceSeconds: 0, waitSeconds: 0 });
  for (const [key, value] of values) {
    const match = /^sightline_analytics_read_(service|wait)_seconds_(sum|count)\{route="([^"]*)"\}$/.exec(key);
    if (!match) continue;
    const totals = of(match[3]!);
    if (match[2] === 'count') totals.count = value;
    else if (match[1] === 'service') totals.serviceSeconds = value;
    else totals.waitSeconds = value;
  }
  return reads;
}

/** Each route's reads between two readings: how many, and the mean time in a slot and waiting for one (ms). */
export function readSlotWindow(now: ServerReading, previous: ServerReading | null): { route: string; count: number; serviceMs: number; waitMs: number }[] {
  return Object.entries(now.reads)
    .map(([route, totals]) => {
      const was = previous?.reads[route] ?? { count: 0, serviceSeconds: 0, waitSeconds: 0 };
      const count = totals.count - was.count;
      const mean = (seconds: number) => (count > 0 ? (seconds * 1000) / count : 0);
      return { route, count, serviceMs: mean(totals.serviceSeconds - was.serviceSeconds), waitMs: mean(totals.waitSeconds - was.waitSeconds) };
    })
    .filter((row) => row.count > 0)
    .sort((a, b) => b.serviceMs - a.serviceMs);
}

const PROM_SAMPLING_MS = 10;

/** name{labels} -> value, for the lines of a scrape. */
export function parseMetrics(text: string): Map<string, number> {
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    values.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return values;
}

function sum(values: Map<string, number>, name: string): number {
  let total = 0;
  for (const [key, value] of values) if (key === name || key.startsWith(`${name}{`)) total += value;
  return total;
}

export async function scrape(port: number): Promise<ServerReading> {
  const answer = await exchange(port, { method: 'GET', path: '/metrics', headers: {}, readBody: true });
  if (answer.status !== 200) throw new Error(`GET /metrics answered ${answer.status}`);
  const values = parseMetrics(answer.body.toString());
  const get = (name: string) => {
    const value = values.get(name);
    if (value === undefined) throw new Error(`GET /metrics has no ${name}`);
    return value;
  };
  const ms = (seconds: number) => seconds * 1000;
  const prom = (name: string) => Math.max(0, ms(get(`sightline_nodejs_eventloop_lag_${name}_seconds`)) - PROM_SAMPLING_MS);
  const fine = (quantile: string) => ms(get(`sightline_bench_eventloop_delay_seconds{quantile="${quantile}"}`));
  return {
    loopDelayMs: { p50: fine('0.5'), p99: fine('0.99'), max: fine('1') },
    promLoopDelayMs: { p50: prom('p50'), p99: prom('p99'), max: prom('max') },
    rssBytes: get('sightline_process_resident_memory_bytes'),
    heapUsedBytes: get('sightline_nodejs_heap_size_used_bytes'),
    heapTotalBytes: get('sightline_nodejs_heap_size_total_bytes'),
    externalBytes: get('sightline_nodejs_external_memory_bytes'),
    eventsAccepted: sum(values, 'sightline_events_accepted_total'),
    eventsDropped: sum(values, 'sightline_events_dropped_total'),
    rollupBacklog: values.get('sightline_rollup_backlog_events') ?? 0,
    poolWaiting: values.get('sightline_database_pool_waiting_queries') ?? null,
    reads: readSlots(values),
  };
}
