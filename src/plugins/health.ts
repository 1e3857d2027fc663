import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { DATABASE_RETRY_AFTER_SECONDS, DATABASE_UNAVAILABLE_MESSAGE, describeFault } from '../db/faults.ts';
import { withDeadline } from '../lib/deadline.ts';
import { sendError } from './error-handler.ts';

// Probes for a process manager, a container healthcheck or a load balancer:
// - /healthz (liveness): 200 while the process runs and serves HTTP. It never asks the database,
//   so an outage of the database does not get a healthy Sightline restarted (it recovers by itself).
// - /readyz (readiness): 200 when the database (and ClickHouse, with CLICKHOUSE_URL) answers within
//   READY_TIMEOUT_MS, otherwise 503 with
//   Retry-After, so traffic can be routed elsewhere meanwhile.
// Both are polled every few seconds: they stay out of the OpenAPI document and log at warn only.
// Lost database connections are logged here too, once each, as a warning.

const READY_TIMEOUT_MS = 2_000;

async function health(app: FastifyInstance): Promise<void> {
  const log = app.log.child({ component: 'database' });
  app.db.onConnectionLost((error) => log.warn({ fault: describeFault(error) }, 'database connection lost; reconnecting on demand'));

  const probe = { schema: { hide: true }, logLevel: 'warn' as const };

  app.get('/healthz', probe, async () => ({ status: 'success', data: [{ ok: true }] }));

  app.get('/readyz', probe, async (request, reply) => {
    try {
      await withDeadline(Promise.all([app.db.ping(), app.clickhouse?.ch.ping()]), READY_TIMEOUT_MS);
    } catch {
      return sendError(reply, request, {
        statusCode: 503,
        message: DATABASE_UNAVAILABLE_MESSAGE,
        retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS,
      });
    }
    return { status: 'success', data: [{ ok: true }] };
  });
}

export default fp(health, { name: 'health', dependencies: ['database', 'error-handler', 'event-store'] });
