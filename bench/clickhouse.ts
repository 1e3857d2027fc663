import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { type ClickHouse, openClickHouse } from '../src/db/clickhouse/clickhouse.ts';
import { migrateClickHouse } from '../src/db/clickhouse/clickhouse-schema.ts';
import { eventRollupsBuilt } from '../src/modules/events/clickhouse-event-rollups.ts';
import { sessionsTableReady } from '../src/modules/events/clickhouse-session-fill.ts';
import { sessionsClosedUntil } from '../src/modules/events/clickhouse-session-rollups.ts';
import { startChild } from './children.ts';
import { type SampledRead, benchSampling } from './clickhouse-sampling.ts';
import type { BenchDatabase } from './prepare.ts';
import { type WebsiteApiResult, benchWebsiteApi, createBenchFunnel } from './website-api.ts';

// The website API's reads with the events on ClickHouse (BENCH_PARTS=clickhouse): accounts and
// websites on SQLite, BENCH_CLICKHOUSE_EVENTS events (default 100 million) over 30 days written
// by ClickHouse itself (INSERT ... SELECT over numbers(): generating them in Node would take
// longer than the reads), then the same reads as the relational engines' website-API part.
// BENCH_CLICKHOUSE_URL (default http://127.0.0.1:8123) names the server; the database is the
// bench's own and is dropped at the end.

export interface ClickHouseBenchResult {
  events: number;
  seedSeconds: number;
  /** How long the server's first start took to build the event and session rollups from the stored events. */
  rollupBuildSeconds: number;
  /** Bytes the event and session rollups take on disk, compressed. */
  rollupBytesOnDisk: number;
  /** Bytes the events take on disk, compressed. */
  bytesOnDisk: number;
  /** Absent with BENCH_CLICKHOUSE_READS=sampling or funnel-visitors (only the sampled reads against exact ones). */
  websiteApi?: WebsiteApiResult;
  /** The filtered reads sampled and exact, with the sampled answers' errors. */
  sampling: SampledRead[];
}

export interface ClickHouseBenchOptions {
  events: number;
  seconds: number;
  warmupSeconds: number;
  nodeArgs: string[];
  call: (method: string, url: string, headers: Record<string, string>, body?: unknown) => Promise<{ bytes: Buffer }>;
}

const TIMEZONE = 'America/New_York';
const DAYS = 30;
/** Consecutive events of one session (so a session's events are minutes apart). */
const EVENTS_PER_SESSION = 4;
/**
 * Rows per INSERT of the seed, well within the client's 30 s request timeout (the seed runs while
 * the rollups' views are dropped: a million rows took 5-12 s on the 2-core machines so far).
 */
const SEED_ROWS_PER_INSERT = 1_000_000;
const PATHS = ['/', '/pricing', '/docs', '/blog', '/about', '/docs/install', '/changelog'];

/**
 * Synthetic traffic of the same shape as bench/synthetic-events.ts: sessions of four events,
 * visitors returning across sessions, places, devices and sources per session, a goal on one
 * event in twenty. Every value is a function of the row number, so a run is reproducible.
 */
export function seedQuery(websiteId: string, domain: string, events: number, nowMs: number, rows: { offset: number; count: number }) {
  const spanMs = DAYS * 86_400_000;
  const session = sql`intDiv(number, ${EVENTS_PER_SESSION})`;
  const pick = (values: string[], hash: ReturnType<typeof sql>) => sql`arrayElement([${sql.join(values)}], (${hash} % ${values.length}) + 1)`;
  const sessionHash = sql`intHash32(${session})`;
  const ms = sql`(${nowMs - spanMs} + intDiv(number * ${spanMs}, ${events}))`;
  return sql`insert into events
    select
      concat('e', toString(number)) as id,
      ${websiteId} as website_id,
      if(number % 20 = 3, 'custom', 'pageview') as type,
      if(number % 20 = 3, 'signup', NULL) as name,
      concat('v', toString(intHash32(${session} + 7) % 3000000)) as visitor_id,
      concat('s', toString(${session})) as session_id,
      ${domain} as hostname,
      ${pick(PATHS, sql`intHash32(number)`)} as path,
      NULL as referrer,
      ${pick(['US', 'US', 'DE', 'GB', 'FR', 'IN', 'BR', 'JP', 'CA'], sessionHash)} as country,
      ${pick(['Chrome', 'Chrome', 'Safari', 'Firefox', 'Microsoft Edge'], sql`intHash32(${session} + 1)`)} as browser,
      ${pick(['Windows', 'macOS', 'iOS', 'Android', 'Linux'], sql`intHash32(${session} + 2)`)} as os,
      ${pick(['desktop', 'desktop', 'mobile', 'tablet'], sql`intHash32(${session} + 3)`)} as device,
      NULL as metadata,
      'browser' as source,
      toDateTime(intDiv(${ms}, 1000)) as occurred_at,
      toUInt64(${ms}) as occurred_ms,
      NULL as region, NULL as city, NULL as browser_version, NULL as os_version, NULL as viewport_width, NULL as viewport_height,
      ${pick(['google.com', 'news.ycombinator.com', 'twitter.com', 'github.com'], sql`intHash32(${session} + 4)`)} as referrer_host,
      ${pick(['Direct/None', 'Direct/None', 'Google', 'Google', 'Hacker News', 'Twitter', 'GitHub'], sql`intHash32(${session} + 4)`)} as referrer_source,
      NULL as utm_source, NULL as utm_medium,
      if(intHash32(${session} + 5) % 10 = 0, ${pick(['spring', 'launch', 'newsletter'], sql`intHash32(${session} + 6)`)}, NULL) as utm_campaign,
      NULL as utm_term, NULL as utm_content, NULL as ref_param, NULL as source_param, NULL as via_param, NULL as link_url, NULL as description,
      -- The session's attributes, as the relay writes them: its first event (number session * 4, a pageview) gives entry and source.
      ${domain} as s_entry_hostname,
      ${pick(PATHS, sql`intHash32(${session} * ${EVENTS_PER_SESSION})`)} as s_entry_path,
      referrer_host as s_referrer_host, referrer_source as s_referrer_source, NULL as s_utm_source, NULL as s_utm_medium,
      utm_campaign as s_utm_campaign, NULL as s_utm_term, NULL as s_utm_content, NULL as s_ref_param, NULL as s_source_param, NULL as s_via_param
    from numbers(${sql.lit(rows.offset)}, ${sql.lit(rows.count)})`;
}

export async function benchClickHouse(database: BenchDatabase, options: ClickHouseBenchOptions): Promise<ClickHouseBenchResult> {
  const server = process.env.BENCH_CLICKHOUSE_URL || 'http://127.0.0.1:8123';
  const clickhouseUrl = `${server}/sl_bench_${randomBytes(6).toString('hex')}`;
  const ch = openClickHouse(clickhouseUrl, migrateClickHouse);
  const headers = { authorization: `Bearer ${database.token}` };
  const start = () => startChild('bench/sightline-server.ts', { BENCH_DATABASE_URL: database.url, BENCH_CLICKHOUSE_URL: clickhouseUrl }, options.nodeArgs);
  let sightline = await start();
  try {
    const base = `http://127.0.0.1:${sightline.port}`;
    const domain = 'clickhouse.bench.example.com';
    const created = await options.call('POST', `${base}/api/v1/admin/websites`, headers, { domain, timezone: TIMEZONE, name: 'ClickHouse' });
    const websiteId = (JSON.parse(created.bytes.toString()) as { data: { id: string }[] }).data[0]!.id;
    const funnelId = await createBenchFunnel(options.call, base, headers, websiteId);

    // The events are written as an installation upgraded to the event rollups holds them: stored
    // before the rollups existed (their views make an INSERT about 5 times as costly, which would
    // make the seed take most of an hour). The server is stopped, the rollups dropped, the events
    // written, and the next start builds the rollups from them, as an upgrade does.
    await untilRollupsBuilt(ch, 60_000);
    await sightline.stop();
    for (const table of ['event_hours_view', 'event_days_view', 'event_hours', 'event_days', 'session_hours', 'session_days', 'sightline_state']) {
      await ch.command(sql`drop table if exists ${sql.table(table)}`);
    }
    console.error(`clickhouse: writing ${options.events} synthetic events`);
    const started = performance.now();
    const now = Date.now();
    // In parts, each well within the client's request timeout (one INSERT of 100 million rows is not).
    for (let offset = 0; offset < options.events; offset += SEED_ROWS_PER_INSERT) {
      await ch.command(seedQuery(websiteId, domain, options.events, now, { offset, count: Math.min(SEED_ROWS_PER_INSERT, options.events - offset) }));
    }
    const seedSeconds = (performance.now() - started) / 1000;
    console.error(`clickhouse: seeded in ${seedSeconds.toFixed(1)} s; the server builds the event rollups`);
    const building = performance.now();
    sightline = await start();
    await untilRollupsBuilt(ch, 3_600_000);
    const rollupBuildSeconds = (performance.now() - building) / 1000;
    const bytes = async (tables: string[]) => {
      const [size] = await ch.rows<{ bytes: string }>(
        sql`select sum(bytes) as bytes from system.parts where database = currentDatabase() and table in (${sql.join(tables)}) and active`,
      );
      return Number(size?.bytes ?? 0);
    };
    console.error(`clickhouse: rollups built in ${rollupBuildSeconds.toFixed(1)} s; the website API's reads`);
    const served = `http://127.0.0.1:${sightline.port}`;
    const websiteApi =
      process.env.BENCH_CLICKHOUSE_READS === 'sampling' || process.env.BENCH_CLICKHOUSE_READS === 'funnel-visitors'
        ? undefined
        : await benchWebsiteApi({
            base: served,
            headers,
            websiteId,
            timezone: TIMEZONE,
            funnelId,
            serverPid: sightline.child.pid,
            seconds: options.seconds,
            warmupSeconds: options.warmupSeconds,
          });
    console.error(`clickhouse: filtered reads sampled (threshold ${process.env.BENCH_CLICKHOUSE_SAMPLE_THRESHOLD || 'the default'}) and exact`);
    const sampling = await benchSampling({
      base: served,
      headers,
      websiteId,
      timezone: TIMEZONE,
      funnelId,
      seconds: options.seconds,
      funnelAndVisitorsOnly: process.env.BENCH_CLICKHOUSE_READS === 'funnel-visitors',
    });
    return {
      events: options.events,
      seedSeconds,
      rollupBuildSeconds,
      bytesOnDisk: await bytes(['events']),
      rollupBytesOnDisk: await bytes(['event_hours', 'event_days', 'session_hours', 'session_days']),
      ...(websiteApi ? { websiteApi } : {}),
      sampling,
    };
  } finally {
    await sightline.stop();
    await ch.command(sql.raw(`drop database if exists ${new URL(clickhouseUrl).pathname.slice(1)}`)).catch(() => {});
    await ch.close();
  }
}

/** Waits for the records the server writes once the event rollups hold every stored event, the session rollups every closed hour, and the sessions table every session. */
async function untilRollupsBuilt(ch: ClickHouse, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  // And the sessions table filled again (the seed dropped its record), so reads take sessions from it.
  const built = async () => (await eventRollupsBuilt(ch)) && (await sessionsClosedUntil(ch)) !== null && (await sessionsTableReady(ch));
  // Until the server has created its tables, the records' table is missing: not built yet.
  while (!(await built().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`the server did not build the event rollups within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
