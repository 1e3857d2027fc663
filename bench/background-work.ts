import { createDatabase } from '../src/db/database.ts';
import { startBuild } from '../src/modules/analytics/derived-build.ts';
import { type LoadResult, load } from './load.ts';
import type { BenchDatabase } from './prepare.ts';

// Background work on the bench's seeded website (issue 33), each measured the same way: how long
// the request that starts it takes to answer, how /healthz and an admin read answer while it runs
// (one connection each, until it ends or for at most BENCH_TZ_LOAD_SECONDS, default 900), and how long it
// takes, its end read from /metrics.
//
// - A time-zone change: the PUT answers, the day rollups move to the new zone
//   (src/modules/analytics/day-relocation.ts); ends at sightline_rollup_relocations 0.
// - A build of every derived table from the raw events, as after an upgrade that adds one or
//   `sightline admin rebuild-website` (src/modules/analytics/derived-build.ts): recorded in the
//   database, as those do; the server's worker finds it at its next look (at most 5 s later);
//   ends at sightline_derived_builds 0.

export const NEW_TIMEZONE = 'Asia/Kolkata';
const POLL_MS = 250;

export interface BackgroundWorkResult {
  /** The time to answer the request (or the write) that starts the work. */
  answerMs: number;
  /** From that answer to the work's end, as /metrics shows it. */
  seconds: number;
  healthz: LoadResult;
  adminRead: LoadResult;
}

/** What the bench's calls answer that this part reads. */
type Call = (method: string, url: string, headers: Record<string, string>, body?: unknown) => Promise<{ bytes: Buffer }>;

export interface BackgroundWorkOptions {
  base: string;
  headers: Record<string, string>;
  websiteId: string;
  serverPid: number | undefined;
  loadSeconds: number;
  call: Call;
}

async function gauge(call: Call, base: string, name: string): Promise<number> {
  const text = (await call('GET', `${base}/metrics`, {})).bytes.toString();
  const match = new RegExp(`^${name} (\\d+)$`, 'm').exec(text);
  if (!match) throw new Error(`/metrics has no ${name}`);
  return Number(match[1]);
}

/** Runs `begin`, then loads /healthz and an admin read until the gauge `until` reads 0. */
async function measure(options: BackgroundWorkOptions, until: string, begin: () => Promise<void>): Promise<BackgroundWorkResult> {
  const { base, headers, websiteId, call } = options;
  const started = performance.now();
  await begin();
  const answered = performance.now();
  let ended: number | null = null;
  const watch = (async () => {
    while (ended === null) {
      if ((await gauge(call, base, until)) === 0) ended = performance.now();
      else await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  })();
  const common = { headers, seconds: options.loadSeconds, warmupSeconds: 0, connections: 1, serverPid: options.serverPid, until: watch };
  const [healthz, adminRead] = await Promise.all([
    load({ ...common, url: `${base}/healthz` }),
    load({ ...common, url: `${base}/api/v1/admin/websites/${websiteId}` }),
  ]);
  await watch;
  return { answerMs: answered - started, seconds: (ended! - answered) / 1000, healthz, adminRead };
}

export function benchTimezoneChange(options: BackgroundWorkOptions): Promise<BackgroundWorkResult> {
  return measure(options, 'sightline_rollup_relocations', async () => {
    const answer = await options.call('PUT', `${options.base}/api/v1/admin/websites/${options.websiteId}`, options.headers, { timezone: NEW_TIMEZONE });
    const body = JSON.parse(answer.bytes.toString()) as { data?: { timezone: string }[] };
    if (body.data?.[0]?.timezone !== NEW_TIMEZONE) throw new Error(`the time-zone change failed: ${answer.bytes.toString().slice(0, 300)}`);
  });
}

export function benchDerivedBuild(options: BackgroundWorkOptions, database: BenchDatabase): Promise<BackgroundWorkResult> {
  return measure(options, 'sightline_derived_builds', async () => {
    const db = createDatabase(database.url, database.pgSchema ? { pgSchema: database.pgSchema } : {});
    try {
      await db.kysely.transaction().execute((trx) => startBuild(trx, options.websiteId, 'the bench'));
    } finally {
      await db.close();
    }
  });
}
