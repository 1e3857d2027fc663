import { type LoadResult, load } from './load.ts';

// A time-zone change on the bench's seeded website (issue 33): how long the PUT takes to answer,
// how /healthz and an admin read answer while the day rollups move to the new zone in the
// background (src/modules/analytics/day-relocation.ts), and how long the move takes. The loads
// run one connection each, for BENCH_TZ_LOAD_SECONDS (default 10) or until the move ends; the end
// is read from /metrics (sightline_rollup_relocations 0).

export const NEW_TIMEZONE = 'Asia/Kolkata';
const POLL_MS = 250;

export interface TimezoneChangeResult {
  /** The PUT's answer time. */
  answerMs: number;
  /** From the answer to the move's end, as /metrics shows it. */
  moveSeconds: number;
  healthz: LoadResult;
  adminRead: LoadResult;
}

/** What the bench's calls answer that this part reads. */
type Call = (method: string, url: string, headers: Record<string, string>, body?: unknown) => Promise<{ bytes: Buffer }>;

export interface TimezoneChangeOptions {
  base: string;
  headers: Record<string, string>;
  websiteId: string;
  serverPid: number | undefined;
  loadSeconds: number;
  call: Call;
}

async function movesLeft(call: Call, base: string): Promise<number> {
  const text = (await call('GET', `${base}/metrics`, {})).bytes.toString();
  const match = /^sightline_rollup_relocations (\d+)$/m.exec(text);
  if (!match) throw new Error('/metrics has no sightline_rollup_relocations');
  return Number(match[1]);
}

export async function benchTimezoneChange(options: TimezoneChangeOptions): Promise<TimezoneChangeResult> {
  const { base, headers, websiteId, call } = options;
  const started = performance.now();
  const answer = await call('PUT', `${base}/api/v1/admin/websites/${websiteId}`, headers, { timezone: NEW_TIMEZONE });
  const answered = performance.now();
  const body = JSON.parse(answer.bytes.toString()) as { data?: { timezone: string }[] };
  if (body.data?.[0]?.timezone !== NEW_TIMEZONE) throw new Error(`the time-zone change failed: ${answer.bytes.toString().slice(0, 300)}`);

  let ended: number | null = null;
  const watch = (async () => {
    while (ended === null) {
      if ((await movesLeft(call, base)) === 0) ended = performance.now();
      else await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  })();
  const common = { headers, seconds: options.loadSeconds, warmupSeconds: 0, connections: 1, serverPid: options.serverPid };
  const [healthz, adminRead] = await Promise.all([
    load({ ...common, url: `${base}/healthz` }),
    load({ ...common, url: `${base}/api/v1/admin/websites/${websiteId}` }),
  ]);
  await watch;
  return { answerMs: answered - started, moveSeconds: (ended! - answered) / 1000, healthz, adminRead };
}
