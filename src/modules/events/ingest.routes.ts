import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { describeRequestWithoutAddress } from '../../http/logging.ts';
import { ErrorEnvelope } from '../../http/schemas.ts';
import { parseJsonText } from '../../plugins/json-body.ts';
import { DROPPED_HEADER, INGEST_BODY_LIMIT, IngestEventBody, IngestResult } from './ingest.schemas.ts';
import { ingestEvent } from './ingest.service.ts';
import { DailySalts } from './ingest.visitor-id.ts';

// Browser ingestion (contract section 5): public, CORS open to every origin, a small JSON body.
// Everything registered here stays inside this plugin: the text/plain parser (a page may send
// the event with navigator.sendBeacon, which posts text/plain), the CORS headers and the log
// serializer that keeps visitors' addresses out of the request log.

const PATH = '/api/events';
const HEADER_LIST = /^[A-Za-z0-9-]+(\s*,\s*[A-Za-z0-9-]+)*$/;

/** The same parser as application/json (NUL characters and prototype keys refused). */
function parseTextBody(_request: FastifyRequest, body: string | Buffer, done: (error: Error | null, body?: unknown) => void) {
  try {
    done(null, parseJsonText(String(body)));
  } catch (error) {
    done(error as Error, undefined);
  }
}

function answerPreflight(request: FastifyRequest, reply: FastifyReply) {
  const requested = request.headers['access-control-request-headers'];
  const allowHeaders = typeof requested === 'string' && HEADER_LIST.test(requested) ? requested : 'Content-Type';
  return reply
    .code(204)
    .header('access-control-allow-methods', 'POST, OPTIONS')
    .header('access-control-allow-headers', allowHeaders)
    .header('access-control-max-age', '86400')
    .header('vary', 'Access-Control-Request-Headers')
    .send();
}

export const ingestRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = { db: app.db.kysely, events: app.events, eventLog: app.eventLog, salts: new DailySalts(app.db.kysely) };
  const countryHeader = app.config.countryHeader;

  app.addContentTypeParser('text/plain', { parseAs: 'string' }, parseTextBody);
  app.addHook('onSend', (_request, reply, payload, done) => {
    reply.header('access-control-allow-origin', '*');
    reply.header('access-control-expose-headers', DROPPED_HEADER);
    done(null, payload);
  });

  app.options(PATH, { config: { access: { public: true } }, schema: { hide: true } }, answerPreflight);

  app.post(PATH, {
    config: { access: { public: true } },
    bodyLimit: INGEST_BODY_LIMIT,
    // The busiest route: no line per request at info (two per event cost a tenth of the CPU);
    // refusals and failures still log at warn and error. The address is hashed for cookieless
    // visitors and must not reach the log either.
    logLevel: 'warn',
    logSerializers: { req: describeRequestWithoutAddress },
    schema: {
      tags: ['Events'],
      summary: 'Record a browser event (what the datafast web SDK sends); no credential, CORS open',
      description:
        'Accepts application/json or text/plain carrying JSON, at most 16 KiB. An event the website settings ' +
        'exclude (or a bot) answers 200 without being stored, with the reason in the X-Sightline-Dropped header. ' +
        "An `identify` event stores no event: it creates or replaces the visitor's profile as POST /api/v1/identify does " +
        '(404 for a visitor with no event on the website).',
      body: IngestEventBody,
      // No credential, so never 401 or 403.
      response: { 200: IngestResult, 400: ErrorEnvelope, 404: ErrorEnvelope, 413: ErrorEnvelope, 415: ErrorEnvelope, 429: ErrorEnvelope },
    },
    handler: async (request, reply) => {
      const country = countryHeader ? request.headers[countryHeader] : undefined;
      const outcome = await ingestEvent(deps, request.body, {
        address: request.ip,
        userAgent: request.headers['user-agent'] ?? '',
        country: Array.isArray(country) ? country[0] : country,
      });
      if ('dropped' in outcome) {
        reply.header(DROPPED_HEADER, outcome.dropped);
        return { status: 'success' as const, dropped: outcome.dropped };
      }
      if ('identified' in outcome) return { status: 'success' as const, ...outcome.identified };
      return { status: 'success' as const, eventId: outcome.event.id, visitorId: outcome.event.visitorId };
    },
  });
};
