import { availableParallelism } from 'node:os';
import type { FastifyInstance, FastifyReply } from 'fastify';
import fp from 'fastify-plugin';
import pLimit from 'p-limit';
import { AppError } from '../errors.ts';
import { withReadStart } from '../lib/read-start.ts';
import { DERIVED_DATA_HEADER } from '../modules/analytics/day-relocation.ts';

// Analytics reads can take seconds on a large website. Run unbounded, a few of them take every
// core (PostgreSQL's backends, or SQLite's read workers) and every other request waits for CPU:
// health probes, admin reads, ingestion. At most `concurrency` of them run at once; the others
// wait their turn, and beyond a queue of QUEUE_LIMIT a read is refused with 503 and Retry-After
// rather than piling up.
//
// A read must include the events accepted `analyticsReadLagMs` (1 s) before it, and those since
// that are derived already: while the background deriver keeps up, its last fold has them and the
// read waits for nothing. Otherwise it waits for them (the backlog's settle) at most
// `analyticsSettleWaitMs`: past that it answers from the derived data as it stands and says so
// with X-Sightline-Derived-Data: behind (a read a moment later has them). Without these, every read
// of a busy website waited for a fold of its own (issue 38). That wait comes before the read takes
// a slot, so a read waiting for a fold never keeps the others (of websites with nothing waiting)
// from running; /metrics has each route's wait for a slot and its time in one.

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Runs one analytics read within the instance's concurrency limit; says on `reply` if it
     * answered behind (null: the caller cannot say it, as a streamed export whose headers are gone).
     */
    analyticsRead<T>(reply: FastifyReply | null, read: () => Promise<T>): Promise<T>;
  }
}

const QUEUE_LIMIT = 64;
const RETRY_AFTER_SECONDS = 2;

/** SQLite: one read per worker thread; PostgreSQL: every core but one. */
export function defaultAnalyticsConcurrency(engine: 'sqlite' | 'postgres', readWorkers: number): number {
  return engine === 'sqlite' ? Math.max(1, readWorkers) : Math.max(1, availableParallelism() - 1);
}

async function analyticsReads(app: FastifyInstance): Promise<void> {
  const concurrency = app.config.analyticsReadConcurrency ?? defaultAnalyticsConcurrency(app.db.engine, app.db.readWorkers);
  const limit = pLimit(concurrency);
  const refuseWhenFull = () => {
    if (limit.pendingCount < QUEUE_LIMIT) return;
    const busy = `The server is busy with ${limit.activeCount + limit.pendingCount} analytics reads; retry in a moment`;
    throw new AppError(503, busy, undefined, RETRY_AFTER_SECONDS);
  };
  app.decorate('analyticsRead', async <T>(reply: FastifyReply | null, read: () => Promise<T>): Promise<T> => {
    refuseWhenFull();
    // It needs what was committed analyticsReadLagMs before it arrived, however long it queued:
    // under load the background deriver's last fold usually has that, and the read waits for none.
    const arrived = performance.now();
    const needsFrom = arrived - app.config.analyticsReadLagMs;
    const route = reply?.request.routeOptions.url ?? 'other';
    const websiteId = reply?.request.websiteAccess?.websiteId ?? reply?.request.sharedLink?.websiteId;
    const { value, behind } = await withReadStart(async () => {
      // The wait for the derived data (bounded) holds no slot: a read waiting for a fold must not
      // keep the reads that need none from running. Its store calls then find the settle done.
      if (websiteId !== undefined) {
        await app.eventStore.settle(websiteId);
        refuseWhenFull();
      }
      const queued = performance.now();
      return limit(async () => {
        const started = performance.now();
        app.metrics.analyticsReadWait.observe({ route }, (started - queued) / 1000);
        try {
          return await read();
        } finally {
          app.metrics.analyticsReadService.observe({ route }, (performance.now() - started) / 1000);
        }
      });
    }, needsFrom);
    if (behind) reply?.header(DERIVED_DATA_HEADER, 'behind');
    return value;
  });
}

export default fp(analyticsReads, { name: 'analytics-reads', dependencies: ['database', 'metrics', 'event-store'] });
