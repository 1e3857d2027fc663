import { availableParallelism } from 'node:os';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import pLimit from 'p-limit';
import { AppError } from '../errors.ts';

// Analytics reads can take seconds on a large website. Run unbounded, a few of them take every
// core (PostgreSQL's backends, or SQLite's read workers) and every other request waits for CPU:
// health probes, admin reads, ingestion. At most `concurrency` of them run at once; the others
// wait their turn, and beyond a queue of QUEUE_LIMIT a read is refused with 503 and Retry-After
// rather than piling up.

declare module 'fastify' {
  interface FastifyInstance {
    /** Runs one analytics read within the instance's concurrency limit. */
    analyticsRead<T>(read: () => Promise<T>): Promise<T>;
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
  app.decorate('analyticsRead', <T>(read: () => Promise<T>): Promise<T> => {
    if (limit.pendingCount >= QUEUE_LIMIT) {
      const busy = `The server is busy with ${limit.activeCount + limit.pendingCount} analytics reads; retry in a moment`;
      return Promise.reject(new AppError(503, busy, undefined, RETRY_AFTER_SECONDS));
    }
    return limit(read);
  });
}

export default fp(analyticsReads, { name: 'analytics-reads', dependencies: ['database'] });
