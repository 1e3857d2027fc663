import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { clientHasCurrent } from '../http/etag.ts';
import { TRACKER_SCRIPT } from '../tracker/script.ts';

// The tracking script for websites' pages: GET /js/script.js and an alias named by its content
// hash, /js/script.<hash>.js. Public and CORS open like /api/events, outside the API's guarded
// scope like /healthz, out of the OpenAPI document, and logged at warn only: every page view of
// every tracked site fetches or revalidates it.
// - /js/script.js may change with an upgrade, so caches keep it an hour and revalidate it with
//   the ETag (304 when unchanged).
// - /js/script.<hash>.js never changes, so caches keep it a year; another hash is a 404 rather
//   than different bytes under a name that promises these ones.

export const TRACKER_PATH = '/js/script.js';
const SHORT_MAX_AGE_SECONDS = 3600;
const IMMUTABLE_MAX_AGE_SECONDS = 365 * 24 * 3600;

const body = Buffer.from(TRACKER_SCRIPT, 'utf8');
export const TRACKER_HASH = createHash('sha256').update(body).digest('hex').slice(0, 16);
export const TRACKER_HASHED_PATH = `/js/script.${TRACKER_HASH}.js`;
const etag = `"${TRACKER_HASH}"`;

function serve(cacheControl: string) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    reply
      .header('access-control-allow-origin', '*')
      .header('cache-control', cacheControl)
      .header('etag', etag)
      .header('x-content-type-options', 'nosniff');
    if (clientHasCurrent(request, etag)) return reply.code(304).send();
    return reply.type('application/javascript; charset=utf-8').send(body);
  };
}

async function trackerScript(app: FastifyInstance): Promise<void> {
  const options = { schema: { hide: true }, logLevel: 'warn' as const };
  app.get(TRACKER_PATH, options, serve(`public, max-age=${SHORT_MAX_AGE_SECONDS}`));
  app.get(TRACKER_HASHED_PATH, options, serve(`public, max-age=${IMMUTABLE_MAX_AGE_SECONDS}, immutable`));
}

export default fp(trackerScript, { name: 'tracker-script' });
