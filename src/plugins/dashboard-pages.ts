import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { extname } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { notFound } from '../errors.ts';
import { DOCS_PATH, OPENAPI_PATH } from './openapi.ts';

// The dashboard (docs/dashboard.md), built by scripts/build.mjs into dist/web/:
// - /assets/<name>-<hash>.<ext>: the bundles, whose names change with their content, so caches
//   keep them a year; sent brotli- or gzip-compressed (compressed at build time) when accepted.
// - the page paths: the same index.html for each (the app routes in the browser), never cached
//   without revalidation, under a strict Content-Security-Policy (scripts and styles from this
//   origin only, no framing; a shared dashboard's /share/<slug>?embed=true alone may be framed).
// - any other path a browser opens (a GET or HEAD accepting text/html, outside /api/): the same
//   index.html with status 404, so the app shows its own "Not found" page rather than the API's
//   JSON error (the not-found handler, src/plugins/error-handler.ts, asks dashboardNotFound).
// The files are read once, when the server starts. A checkout that was never built answers 503
// on the pages, saying what to run. Public like /js/script.js, outside the API's guarded scope,
// out of the OpenAPI document, and logged at warn only.

const WEB_ROOT = new URL('../../dist/web/', import.meta.url);
const ASSETS_ROOT = new URL('assets/', WEB_ROOT);

const SHARE_PAGE = '/share/:slug';

export const DASHBOARD_PATHS = [
  '/',
  '/setup',
  '/sign-in',
  '/sign-up',
  '/forgot-password',
  '/reset-password',
  '/invite',
  '/websites',
  '/websites/:websiteId',
  '/websites/:websiteId/settings',
  '/account',
  '/account/*',
  // A shared dashboard (src/modules/shared-links): the app asks the share API whether it opens.
  SHARE_PAGE,
] as const;

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * For the not-found handler: the dashboard's index.html with status 404 when a browser opens
     * an unknown page (the app then shows its "Not found"); null for the API's paths and for any
     * client that does not ask for a page, which keep the JSON error.
     */
    dashboardNotFound(request: FastifyRequest, reply: FastifyReply): FastifyReply | null;
  }
}

const IMMUTABLE = 'public, max-age=31536000, immutable';
const NOT_BUILT = 'The dashboard is not built: run `npm run build`, then restart Sightline.\n';

export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  // uPlot and the pages set styles through the CSSOM only (element.style), which this allows.
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * A shared dashboard opened with ?embed=true may be framed by any site (that is what embedding
 * is for); every other page, the shared dashboard without it included, refuses framing.
 */
export const EMBED_CONTENT_SECURITY_POLICY = CONTENT_SECURITY_POLICY.replace("frame-ancestors 'none'", 'frame-ancestors *');

function isEmbed(request: FastifyRequest): boolean {
  return request.routeOptions.url === SHARE_PAGE && (request.query as { embed?: unknown }).embed === 'true';
}

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'application/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

interface Asset {
  type: string;
  identity: Buffer;
  gzip?: Buffer;
  brotli?: Buffer;
}

interface Dashboard {
  index: Buffer;
  etag: string;
  assets: Map<string, Asset>;
}

function readIfPresent(url: URL): Buffer | undefined {
  return existsSync(url) ? readFileSync(url) : undefined;
}

/** index.html and every asset with its precompressed forms; null when dist/web was never built. */
function loadDashboard(): Dashboard | null {
  const index = readIfPresent(new URL('index.html', WEB_ROOT));
  if (!index) return null;
  const assets = new Map<string, Asset>();
  const names = existsSync(ASSETS_ROOT) ? readdirSync(ASSETS_ROOT) : [];
  for (const name of names) {
    if (name.endsWith('.gz') || name.endsWith('.br') || name.endsWith('.tmp')) continue;
    const url = new URL(encodeURIComponent(name), ASSETS_ROOT);
    assets.set(name, {
      type: CONTENT_TYPES[extname(name)] ?? 'application/octet-stream',
      identity: readFileSync(url),
      gzip: readIfPresent(new URL(`${encodeURIComponent(name)}.gz`, ASSETS_ROOT)),
      brotli: readIfPresent(new URL(`${encodeURIComponent(name)}.br`, ASSETS_ROOT)),
    });
  }
  const etag = `"${createHash('sha256').update(index).digest('hex').slice(0, 16)}"`;
  return { index, etag, assets };
}

/** The encodings the client accepts (q > 0), from Accept-Encoding. */
function acceptedEncodings(request: FastifyRequest): Set<string> {
  const header = request.headers['accept-encoding'];
  const accepted = new Set<string>();
  if (typeof header !== 'string') return accepted;
  for (const part of header.split(',')) {
    const [name, ...parameters] = part.trim().toLowerCase().split(';');
    const q = parameters.map((parameter) => /^\s*q=([\d.]+)\s*$/.exec(parameter)?.[1]).find((value) => value !== undefined);
    if (name && (q === undefined || Number(q) > 0)) accepted.add(name.trim());
  }
  return accepted;
}

function sendAsset(asset: Asset, request: FastifyRequest, reply: FastifyReply) {
  reply
    .header('cache-control', IMMUTABLE)
    .header('vary', 'accept-encoding')
    .header('x-content-type-options', 'nosniff')
    .type(asset.type);
  const accepted = acceptedEncodings(request);
  const any = accepted.has('*');
  if (asset.brotli && (accepted.has('br') || any)) return reply.header('content-encoding', 'br').send(asset.brotli);
  if (asset.gzip && (accepted.has('gzip') || any)) return reply.header('content-encoding', 'gzip').send(asset.gzip);
  return reply.send(asset.identity);
}

/** Whether the client asked for JSON rather than a page (a script probing the server's root). */
function wantsJson(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  return /\bapplication\/json\b/.test(accept) && !/\btext\/html\b/.test(accept);
}

async function dashboardPages(app: FastifyInstance): Promise<void> {
  const dashboard = loadDashboard();
  const options = { schema: { hide: true }, config: { access: { public: true as const } }, logLevel: 'warn' as const };

  app.get<{ Params: { name: string } }>('/assets/:name', options, async (request, reply) => {
    const asset = dashboard?.assets.get(request.params.name);
    if (!asset) throw notFound('No such asset');
    return sendAsset(asset, request, reply);
  });

  /** index.html as a page of the app: 200 (or 304) for the app's paths, 404 for any other. */
  const sendIndex = (request: FastifyRequest, reply: FastifyReply, found: boolean) => {
    reply.header('x-content-type-options', 'nosniff').header('referrer-policy', 'same-origin');
    if (!dashboard) return reply.code(found ? 503 : 404).header('cache-control', 'no-store').type('text/plain; charset=utf-8').send(NOT_BUILT);
    reply.header('cache-control', 'no-cache');
    if (isEmbed(request)) reply.header('content-security-policy', EMBED_CONTENT_SECURITY_POLICY);
    else reply.header('content-security-policy', CONTENT_SECURITY_POLICY).header('x-frame-options', 'DENY');
    // A shared dashboard's URL is its credential: search engines keep out.
    if (request.routeOptions.url === SHARE_PAGE) reply.header('x-robots-tag', 'noindex, nofollow');
    if (!found) return reply.code(404).type('text/html; charset=utf-8').send(dashboard.index);
    reply.header('etag', dashboard.etag);
    const match = request.headers['if-none-match'];
    if (typeof match === 'string' && match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === dashboard.etag)) {
      return reply.code(304).send();
    }
    return reply.type('text/html; charset=utf-8').send(dashboard.index);
  };

  const page = async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.routeOptions.url === '/' && wantsJson(request)) {
      return { status: 'success' as const, data: [{ name: 'Sightline', docs: DOCS_PATH, openapi: OPENAPI_PATH }] };
    }
    return sendIndex(request, reply, true);
  };
  for (const path of DASHBOARD_PATHS) app.get(path, options, page);

  app.decorate('dashboardNotFound', (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split(/[?#]/)[0]!;
    if (request.method !== 'GET' && request.method !== 'HEAD') return null;
    if (path === '/api' || path.startsWith('/api/') || !/\btext\/html\b/.test(request.headers.accept ?? '')) return null;
    return sendIndex(request, reply, false);
  });
}

export default fp(dashboardPages, { name: 'dashboard-pages' });
