import { randomBytes } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Gauge, type Registry } from 'prom-client';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createDatabase } from '../src/db/database.ts';

// The real Sightline app in its own process, on an already migrated database.
// Input: BENCH_DATABASE_URL, BENCH_PG_SCHEMA (optional), BENCH_CLICKHOUSE_URL (optional: the
// events on ClickHouse), BENCH_LOGGER=off (optional), TRUST_PROXY=1 (optional: client addresses
// from X-Forwarded-For, as behind a proxy), BENCH_LOOP_DELAY=1 (optional: the fine event-loop
// delay gauge below).
// Output: "LISTENING <port>" on stdout.

const url = process.env.BENCH_DATABASE_URL;
if (!url) throw new Error('BENCH_DATABASE_URL is required');
const pgSchema = process.env.BENCH_PG_SCHEMA || undefined;

const NEVER = 1_000_000_000;
// The analytics reads' settings (ANALYTICS_*) pass through, so a run can compare them.
const analyticsSettings = Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('ANALYTICS_')));
const config = loadConfig(analyticsSettings, {
  host: '127.0.0.1',
  port: 0,
  databaseUrl: url,
  // BENCH_LOG_LEVEL=info measures what a production server's default log level costs.
  logLevel: process.env.BENCH_LOG_LEVEL || 'warn',
  secretKey: randomBytes(32).toString('base64'), // required on PostgreSQL; nothing here is encrypted
  rateLimit: { perCredential: NEVER, perAddress: NEVER, perPublicAddress: NEVER, windowMs: 60_000 },
  clickhouseUrl: process.env.BENCH_CLICKHOUSE_URL || undefined,
  // BENCH_CLICKHOUSE_SAMPLE_THRESHOLD: the server's CLICKHOUSE_SAMPLE_THRESHOLD (events above which a read samples).
  ...(process.env.BENCH_CLICKHOUSE_SAMPLE_THRESHOLD ? { clickhouseSampleThreshold: Number(process.env.BENCH_CLICKHOUSE_SAMPLE_THRESHOLD) } : {}),
  trustProxy: process.env.TRUST_PROXY === '1',
});

const db = createDatabase(url, pgSchema ? { pgSchema } : {});
const app = await buildApp({ config, db, ...(process.env.BENCH_LOGGER === 'off' ? { logger: false } : {}) });
if (process.env.BENCH_LOOP_DELAY === '1') addLoopDelayGauge(app.metrics.registry);
await app.listen({ host: config.host, port: config.port });
const address = app.server.address();
if (!address || typeof address === 'string') throw new Error('no TCP address');
console.log(`LISTENING ${address.port}`);

const shutdown = () => {
  app
    .close()
    .then(() => db.close())
    .then(
      () => process.exit(0),
      () => process.exit(1),
    );
};
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);

/**
 * sightline_bench_eventloop_delay_seconds{quantile="0.5"|"0.99"|"1"} on /metrics: how late the
 * event loop ran a timer due every LOOP_RESOLUTION_MS, since the previous scrape (each scrape
 * starts a new period). prom-client's nodejs_eventloop_lag_* gauges sample every 10 ms and
 * report the whole interval between samples (about 10 ms on an idle loop), so a stall shorter
 * than 10 ms can go unseen and a longer one is under-counted by up to 10 ms; this samples every
 * millisecond and reports the delay beyond the interval.
 */
function addLoopDelayGauge(registry: Registry): void {
  const LOOP_RESOLUTION_MS = 1;
  const histogram = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  histogram.enable();
  const beyond = (nanoseconds: number) => Math.max(0, nanoseconds / 1e6 - LOOP_RESOLUTION_MS) / 1000;
  new Gauge({
    name: 'sightline_bench_eventloop_delay_seconds',
    help: `Event-loop delay beyond a ${LOOP_RESOLUTION_MS} ms timer since the previous scrape (bench/sightline-server.ts).`,
    labelNames: ['quantile'] as const,
    registers: [registry],
    collect() {
      if (histogram.count === 0) return;
      this.set({ quantile: '0.5' }, beyond(histogram.percentile(50)));
      this.set({ quantile: '0.99' }, beyond(histogram.percentile(99)));
      this.set({ quantile: '1' }, beyond(histogram.max));
      histogram.reset();
    },
  });
}
