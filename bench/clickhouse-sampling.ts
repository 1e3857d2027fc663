import { BREAKDOWNS } from '../src/modules/analytics/breakdowns.ts';
import { ONE_FILTER_EACH, READ_FILTERS, last30Days, percentile } from './website-api.ts';

// Sampled reads against exact ones on ClickHouse (issue 36 items 2 and 3): the filtered overview
// and breakdowns, the funnel and the visitor list (filtered and not), over all time and the last
// 30 days, each read as the server answers it (sampled when its range holds more than the
// threshold's events) and with exact=true; their p50 and p99, the rate the answer names, and the
// sampled answer's error against the exact one: visitors, pageviews and bounce rate for the
// overview, the largest relative error of visitors over the top ten rows (that the exact answer
// has too) for a breakdown, of the steps' visitors for the funnel, of `pagination.total` for the
// visitor list. BENCH_CLICKHOUSE_READS=funnel-visitors reads only the funnel and the visitor list.

export interface SampledRead {
  path: string;
  /** The rate X-Sightline-Sample-Rate named; null when the read was not sampled. */
  rate: number | null;
  sampled: { p50Ms: number; p99Ms: number; requests: number };
  exact: { p50Ms: number; p99Ms: number; requests: number };
  /** Relative errors (|sampled - exact| / exact) of the counts, and the bounce rate's difference in percentage points. */
  error: { visitors: number; pageviews?: number; bounceRatePoints?: number; rowsCompared?: number };
}

const MIN_SAMPLES = 3;
const MAX_SAMPLES = 200;

async function timed(url: string, headers: Record<string, string>, seconds: number) {
  const first = await fetch(url, { headers });
  const body = (await first.json()) as Answer;
  const rate = first.headers.get('x-sightline-sample-rate');
  const times: number[] = [];
  const end = performance.now() + seconds * 1000;
  while ((performance.now() < end || times.length < MIN_SAMPLES) && times.length < MAX_SAMPLES) {
    const started = performance.now();
    await (await fetch(url, { headers })).arrayBuffer();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { body, rate: rate === null ? null : Number(rate), p50Ms: percentile(times, 50), p99Ms: percentile(times, 99), requests: times.length };
}

interface Answer {
  data: Record<string, unknown>[];
  pagination?: { total: number };
}

const relative = (sampled: number, exact: number) => (exact === 0 ? (sampled === 0 ? 0 : 1) : Math.abs(sampled - exact) / exact);

/** A row's key: every field but the counts. */
const rowKey = (row: Record<string, unknown>) =>
  JSON.stringify(Object.entries(row).filter(([name]) => !['visitors', 'pageviews', 'revenue', 'completions', 'clicks'].includes(name)));

function errorOf(path: string, sampledAnswer: Answer, exactAnswer: Answer): SampledRead['error'] {
  const [sampled, exact] = [sampledAnswer.data, exactAnswer.data];
  if (path.includes('/visitors')) return { visitors: relative(Number(sampledAnswer.pagination?.total), Number(exactAnswer.pagination?.total)) };
  if (path.includes('/funnels/')) {
    type Steps = { steps: { visitors: number }[] };
    const [s, e] = [(sampled[0] as unknown as Steps | undefined)?.steps ?? [], (exact[0] as unknown as Steps | undefined)?.steps ?? []];
    return { visitors: Math.max(0, ...e.map((step, i) => relative(Number(s[i]?.visitors), step.visitors))), rowsCompared: e.length };
  }
  if (path.includes('/overview')) {
    const [s, e] = [sampled[0] ?? {}, exact[0] ?? {}];
    return {
      visitors: relative(Number(s.visitors), Number(e.visitors)),
      pageviews: relative(Number(s.pageviews), Number(e.pageviews)),
      bounceRatePoints: Math.abs(Number(s.bounce_rate) - Number(e.bounce_rate)),
    };
  }
  const exactRows = new Map(exact.map((row) => [rowKey(row), row]));
  let worst = 0;
  let compared = 0;
  for (const row of sampled.slice(0, 10)) {
    const truth = exactRows.get(rowKey(row));
    if (!truth) continue;
    compared += 1;
    worst = Math.max(worst, relative(Number(row.visitors), Number(truth.visitors)));
  }
  return { visitors: worst, rowsCompared: compared };
}

export async function benchSampling(options: {
  base: string;
  headers: Record<string, string>;
  websiteId: string;
  timezone: string;
  funnelId: string;
  seconds: number;
  /** Only the funnel and the visitor list (BENCH_CLICKHOUSE_READS=funnel-visitors). */
  funnelAndVisitorsOnly?: boolean;
}): Promise<SampledRead[]> {
  const site = `websiteId=${options.websiteId}`;
  // The funnel and the visitor list scan raw events filtered or not: both are read unfiltered too.
  const whole = [`/api/v1/analytics/funnels/${options.funnelId}`, '/api/v1/visitors'];
  const paths = options.funnelAndVisitorsOnly ? whole : ['/api/v1/analytics/overview', ...BREAKDOWNS.map((kind) => `/api/v1/analytics/${kind}`), ...whole];
  const ranges = [{ name: 'all time', query: '' }, { name: 'last 30 days', query: `&${last30Days(options.timezone)}` }];
  const filters = options.funnelAndVisitorsOnly ? [READ_FILTERS, ''] : [READ_FILTERS, ONE_FILTER_EACH[4]!, ''];
  const results: SampledRead[] = [];
  for (const range of ranges) {
    for (const filter of filters) {
      for (const path of paths) {
        if (filter === '' && !whole.includes(path)) continue;
        const url = `${options.base}${path}?${site}${range.query}${filter ? `&${filter}` : ''}`;
        const sampled = await timed(url, options.headers, options.seconds);
        // An answer without a rate read every event: it is the exact one (a release before sampling, a small range).
        const exact = sampled.rate === null ? sampled : await timed(`${url}&exact=true`, options.headers, options.seconds);
        const read: SampledRead = {
          path: `${path.replace(options.funnelId, ':id')} (${range.name}, ${filter || 'unfiltered'})`,
          rate: sampled.rate,
          sampled: { p50Ms: sampled.p50Ms, p99Ms: sampled.p99Ms, requests: sampled.requests },
          exact: { p50Ms: exact.p50Ms, p99Ms: exact.p99Ms, requests: exact.requests },
          error: errorOf(path, sampled.body, exact.body),
        };
        results.push(read);
        const e = read.error;
        console.error(
          `  ${read.path}: rate ${read.rate ?? 'exact'}, p50 ${sampled.p50Ms.toFixed(0)} ms sampled / ${exact.p50Ms.toFixed(0)} ms exact; ` +
            `visitors error ${(e.visitors * 100).toFixed(2)} %` +
            (e.pageviews !== undefined
              ? `, pageviews ${(e.pageviews * 100).toFixed(2)} %, bounce rate ${e.bounceRatePoints!.toFixed(2)} pp`
              : e.rowsCompared === undefined
                ? ' (the total)'
                : ` (worst of top ${e.rowsCompared} rows)`),
        );
      }
    }
  }
  return results;
}

/** The comparison as the report prints it. */
export function printSampling(reads: SampledRead[]): void {
  console.log('');
  console.log('clickhouse sampling: filtered reads as answered (sampled above the threshold) and with exact=true');
  console.log('| read | rate | sampled p50 / p99 ms | exact p50 / p99 ms | visitors error | pageviews error | bounce rate error |');
  console.log('|---|---|---|---|---|---|---|');
  const pct = (value: number | undefined) => (value === undefined ? '' : `${(value * 100).toFixed(2)} %`);
  for (const read of reads) {
    const e = read.error;
    console.log(
      `| ${read.path} | ${read.rate ?? 'exact'} | ${read.sampled.p50Ms.toFixed(0)} / ${read.sampled.p99Ms.toFixed(0)} | ${read.exact.p50Ms.toFixed(0)} / ${read.exact.p99Ms.toFixed(0)} | ` +
        `${pct(e.visitors)}${e.rowsCompared !== undefined ? ` (worst of ${e.rowsCompared} rows)` : ''} | ${pct(e.pageviews)} | ${e.bounceRatePoints === undefined ? '' : `${e.bounceRatePoints.toFixed(2)} pp`} |`,
    );
  }
  const sampled = reads.filter((read) => read.rate !== null);
  const worst = (pick: (read: SampledRead) => number | undefined) => Math.max(0, ...sampled.map((read) => pick(read) ?? 0));
  console.log(
    `clickhouse sampling: ${sampled.length} of ${reads.length} reads sampled; worst error: visitors ${pct(worst((r) => r.error.visitors))}, ` +
      `pageviews ${pct(worst((r) => r.error.pageviews))}, bounce rate ${worst((r) => r.error.bounceRatePoints).toFixed(2)} pp`,
  );
}
