import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { unauthorized } from '../errors.ts';
import { readDatabase } from '../http/metrics-database.ts';
import { AppMetrics, type EventSource } from '../http/metrics-registry.ts';
import { DROPPED_HEADER } from '../modules/events/ingest.schemas.ts';

// GET /metrics in the Prometheus text format (prom-client). It sits outside the API's guarded
// scope, like /healthz, and out of the OpenAPI document. With METRICS_TOKEN set it asks for
// that bearer token; without, it is open: it carries counts and route templates, no ids or
// secrets. Scrapes log nothing below warn, so a 15-second scrape interval does not fill the log.

declare module 'fastify' {
  interface FastifyInstance {
    metrics: AppMetrics;
  }
}

export const METRICS_PATH = '/metrics';

/** The routes whose 200 answers are accepted events, by "METHOD template". */
const EVENT_ROUTES: Record<string, EventSource> = {
  'POST /api/events': 'browser',
  'POST /api/v1/goals': 'server_goal',
  'POST /api/v1/payments': 'payment',
};

const digest = (value: string) => createHash('sha256').update(value).digest();

/** A bearer check in constant time (both sides hashed first, so lengths leak nothing either). */
function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match !== null && timingSafeEqual(digest(match[1]!), digest(token));
}

function countRequest(metrics: AppMetrics, request: FastifyRequest, reply: FastifyReply): void {
  const route = request.routeOptions.url ?? 'unmatched';
  const status = reply.statusCode;
  metrics.httpDuration.observe({ method: request.method, route, status_code: String(status) }, reply.elapsedTime / 1000);

  const source = status === 200 ? EVENT_ROUTES[`${request.method} ${route}`] : undefined;
  if (!source) return;
  // Ingestion answers 200 for a dropped event too, with the reason in this header.
  const dropped = reply.getHeader(DROPPED_HEADER);
  if (source === 'browser' && typeof dropped === 'string') metrics.eventsDropped.inc({ reason: dropped });
  else metrics.eventsAccepted.inc({ source });
}

async function metrics(app: FastifyInstance): Promise<void> {
  const appMetrics = new AppMetrics(app.db);
  app.decorate('metrics', appMetrics);
  // A callback hook, not an async one: it runs on every answer and has nothing to wait for.
  app.addHook('onResponse', (request, reply, done) => {
    countRequest(appMetrics, request, reply);
    done();
  });

  const token = app.config.metricsToken;
  app.get(METRICS_PATH, { schema: { hide: true }, logLevel: 'warn' }, async (request, reply) => {
    if (token !== undefined && !bearerMatches(request.headers.authorization, token)) {
      throw unauthorized('GET /metrics needs Authorization: Bearer <METRICS_TOKEN>');
    }
    const text = await appMetrics.scrape(await readDatabase(app.db.kysely));
    return reply.header('cache-control', 'no-store').type(appMetrics.contentType).send(text);
  });
}

export default fp(metrics, { name: 'metrics', dependencies: ['database'] });
