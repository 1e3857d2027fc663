import { readFile } from 'node:fs/promises';
import type { FastifyInstance, FastifyReply } from 'fastify';
import fp from 'fastify-plugin';
import { notFound } from '../errors.ts';
import { clientHasCurrent, etagOf } from '../http/etag.ts';
import { FLAGS_PATH, FLAG_FILE_NAME, flagCodes, flagFile } from '../lib/country-flags.ts';

// GET /flags/{cc}.svg: a country's flag (src/lib/country-flags.ts), the `image` of the countries
// breakdown. Public like /js/script.js, outside the API's guarded scope, out of the OpenAPI
// document, and logged at warn only: a dashboard of countries fetches one per row. A flag only
// changes with an upgrade of the package, so caches keep it 30 days and then revalidate it with
// the ETag (304 when unchanged). Any name that is not a lower-case code with a flag is a 404.

const MAX_AGE_SECONDS = 30 * 24 * 3600;
// Opened as a document, an SVG could run script: these files have none, and may not.
const SVG_POLICY = "default-src 'none'; style-src 'unsafe-inline'";

interface Flag {
  body: Buffer;
  etag: string;
}

async function countryFlags(app: FastifyInstance): Promise<void> {
  // Listed now, so a missing package fails the start rather than the first request.
  app.log.debug({ flags: flagCodes().size }, 'country flags');
  const loaded = new Map<string, Promise<Flag>>();
  const load = (code: string, file: string) => {
    let flag = loaded.get(code);
    if (!flag) {
      flag = readFile(file).then((body) => ({ body, etag: etagOf(body) }));
      // A failed read is not remembered: the next request tries again.
      flag.catch(() => loaded.delete(code));
      loaded.set(code, flag);
    }
    return flag;
  };

  app.get<{ Params: { name: string } }>(`${FLAGS_PATH}/:name`, { schema: { hide: true }, logLevel: 'warn' }, async (request, reply: FastifyReply) => {
    const code = FLAG_FILE_NAME.exec(request.params.name)?.[1];
    const file = code === undefined ? null : flagFile(code);
    if (code === undefined || file === null) throw notFound('No flag for this name: use /flags/{cc}.svg with a lower-case ISO 3166-1 alpha-2 code');
    const flag = await load(code, file);
    reply
      .header('access-control-allow-origin', '*')
      .header('cache-control', `public, max-age=${MAX_AGE_SECONDS}`)
      .header('etag', flag.etag)
      .header('content-security-policy', SVG_POLICY)
      .header('x-content-type-options', 'nosniff');
    if (clientHasCurrent(request, flag.etag)) return reply.code(304).send();
    return reply.type('image/svg+xml').send(flag.body);
  });
}

export default fp(countryFlags, { name: 'country-flags' });
