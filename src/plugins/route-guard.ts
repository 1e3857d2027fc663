import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Type } from 'typebox';
import { holds } from '../auth/permissions.ts';
import { API_KEY_ROLE, type Role, describeAction, roleAllows } from '../auth/policy.ts';
import { findRole } from '../auth/credentials.repository.ts';
import { PrincipalCache } from '../auth/principal-cache.ts';
import { type Principal, type WebsiteAccess, tokenAllowsWebsite } from '../auth/principal.ts';
import { SESSION_COOKIE } from '../auth/sessions.ts';
import { checkCsrf } from '../http/csrf.ts';
import { rateLimitStoreOptions } from '../http/rate-limit-store.ts';
import { AppError, forbidden, invalidField, notFound, unauthorized } from '../errors.ts';
import { isId } from '../lib/ids.ts';
import { type Membership, authenticate } from './authenticate.ts';
import type { AccountAccess, RouteAccess, WebsiteScopedAccess } from './route-access.ts';

const NoQuery = Type.Object({}, { additionalProperties: false });
const TRACKING_ID = /^dfid_[A-Za-z0-9]{1,64}$/;

async function findWebsiteIdByTrackingId(db: FastifyInstance['db']['kysely'], principals: PrincipalCache, trackingId: string): Promise<string | undefined> {
  const generation = principals.generation();
  const cached = principals.websiteIdOf(trackingId, generation);
  if (cached !== undefined) return cached;
  const row = await db.selectFrom('websites').select('id').where('tracking_id', '=', trackingId).executeTakeFirst();
  if (row) principals.rememberWebsiteId(trackingId, row.id, generation);
  return row?.id;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
    authFailure: string | null;
    membership: Membership | null;
    websiteAccess: WebsiteAccess | null;
  }
}

function assertDeclared(access: RouteAccess | undefined, method: string, url: string): void {
  if (!access) throw new Error(`Route ${method} ${url} declares no config.access; every API route must.`);
  if ('scope' in access && access.scope === 'website' && (access.websiteIdIn ?? 'path') === 'path') {
    if (!url.includes(':websiteId')) throw new Error(`Route ${method} ${url} is website-scoped but has no :websiteId.`);
  }
}

function readWebsiteId(request: FastifyRequest, access: WebsiteScopedAccess): { id: string | undefined; field: string } {
  if ((access.websiteIdIn ?? 'path') === 'path') {
    return { id: (request.params as Record<string, string>).websiteId, field: 'path.websiteId' };
  }
  const value = (request.query as Record<string, unknown>).websiteId;
  if (Array.isArray(value)) throw invalidField('query.websiteId', 'must be a single value');
  return { id: typeof value === 'string' ? value : undefined, field: 'query.websiteId' };
}

/** The website id whose role the token lookup can read along, when the route names a valid one. */
function websiteIdToPrefetch(request: FastifyRequest, access: AccountAccess | WebsiteScopedAccess): string | undefined {
  if (access.scope !== 'website') return undefined;
  const { id } = readWebsiteId(request, access);
  return id !== undefined && isId(id) ? id : undefined;
}

/** The role read (or kept) with the credential when the route named this website; else read now. */
async function findRoleOn(app: FastifyInstance, request: FastifyRequest, accountId: string, websiteId: string) {
  const membership = request.membership;
  if (membership?.websiteId === websiteId) return membership.role ?? undefined;
  return findRole(app.db.kysely, accountId, websiteId);
}

/**
 * Rate-limit buckets: per credential once authenticated, per client address otherwise, and a
 * larger per-address budget of its own for public routes (browser ingestion behind NATs).
 */
function rateKey(request: FastifyRequest): string {
  const access = request.routeOptions.config.access;
  if (access && 'public' in access) return `public:${request.ip}`;
  const principal = request.principal;
  if (!principal) return `address:${request.ip}`;
  if (principal.kind === 'session') return `session:${principal.sessionId}`;
  return principal.kind === 'token' ? `token:${principal.tokenId}` : `apiKey:${principal.apiKeyId}`;
}

const DASHBOARD_ONLY = 'This route is for the dashboard: sign in there (a token or key cannot call it)';

function checkAccount(principal: Principal, access: AccountAccess): void {
  if (access.sessionOnly && principal.kind !== 'session') throw forbidden(DASHBOARD_ONLY);
  if (principal.kind === 'apiKey') {
    if (!access.apiKey) throw forbidden('A website API key (df_) cannot call this route; use an account token (dft_)');
    return;
  }
  if (!holds(principal.permissions, access.permission)) {
    throw forbidden(`This token lacks the permission ${access.permission}`);
  }
}

async function checkWebsite(app: FastifyInstance, principals: PrincipalCache, request: FastifyRequest, principal: Principal, access: WebsiteScopedAccess) {
  if (access.sessionOnly && principal.kind !== 'session') throw forbidden(DASHBOARD_ONLY);
  const { id, field } = readWebsiteId(request, access);
  const websiteId = id ?? (principal.kind === 'apiKey' ? principal.websiteId : undefined);
  if (websiteId === undefined) throw invalidField(field, 'is required');
  if (field === 'query.websiteId' && TRACKING_ID.test(websiteId)) {
    // Public clients of the website API pass the script's trackingId as often as the id.
    const resolved = await findWebsiteIdByTrackingId(app.db.kysely, principals, websiteId);
    if (!resolved) throw notFound('Website not found');
    return checkWebsiteId(app, request, principal, access, resolved);
  }
  if (!isId(websiteId)) throw invalidField(field, 'must be a 24-character lowercase hex id');
  return checkWebsiteId(app, request, principal, access, websiteId);
}

async function checkWebsiteId(app: FastifyInstance, request: FastifyRequest, principal: Principal, access: WebsiteScopedAccess, websiteId: string) {

  let role: Role;
  if (principal.kind === 'apiKey') {
    if (!access.apiKey) throw forbidden('A website API key (df_) cannot call this route; use an account token (dft_)');
    if (websiteId !== principal.websiteId) throw forbidden('This API key belongs to another website');
    role = API_KEY_ROLE;
  } else {
    const found = await findRoleOn(app, request, principal.accountId, websiteId);
    if (!found) throw notFound('Website not found');
    role = found as Role;
    if (!tokenAllowsWebsite(principal, websiteId)) throw forbidden('This token is not allowed to access this website');
    if (!holds(principal.permissions, access.permission)) {
      throw forbidden(`This token lacks the permission ${access.permission}`);
    }
  }
  if (!roleAllows(role, access.action)) throw forbidden(`Your role (${role}) cannot ${describeAction(access.action)}`);
  request.websiteAccess = { websiteId, role };
}

async function routeGuard(app: FastifyInstance): Promise<void> {
  app.decorateRequest('principal', null);
  app.decorateRequest('authFailure', null);
  app.decorateRequest('membership', null);
  app.decorateRequest('websiteAccess', null);
  // Credentials read once per instance until a credential table changes (src/auth/principal-cache.ts).
  const principals = new PrincipalCache(app.db.credentialWrites, app.db.watchOtherWriters(app.log));
  app.addHook('onClose', () => principals.close());

  app.addHook('onRoute', (route) => {
    const access = route.config?.access;
    assertDeclared(access, String(route.method), route.url);
    // A route that takes no query parameters refuses them, so a typo comes back as a 400.
    if (access && !('public' in access) && !route.schema?.querystring) {
      route.schema = { ...route.schema, querystring: NoQuery };
    }
  });

  // 1. Who is calling (never answers by itself).
  app.addHook('onRequest', async (request) => {
    const access = request.routeOptions.config.access;
    if (!access || 'public' in access) return;
    const outcome = await authenticate(
      app.db.kysely,
      principals,
      request.headers.authorization,
      websiteIdToPrefetch(request, access),
      request.cookies[SESSION_COOKIE],
    );
    if ('principal' in outcome) {
      request.principal = outcome.principal;
      request.membership = outcome.membership;
    } else {
      request.authFailure = outcome.failure;
    }
  });

  // 2. Rate limit: per credential once authenticated, per client address otherwise. The counters
  // are shared by every instance on one PostgreSQL or Redis (src/http/rate-limit-store.ts); the
  // dashboard's sign-in throttles count through this same registration.
  await app.register(rateLimit, { global: false, ...(await rateLimitStoreOptions(app)) });
  const { perCredential, perAddress, perPublicAddress, windowMs } = app.config.rateLimit;
  const maxFor = (key: string) =>
    key.startsWith('public:') ? perPublicAddress : key.startsWith('address:') ? perAddress : perCredential;
  app.addHook(
    'onRequest',
    app.rateLimit({
      keyGenerator: rateKey,
      max: (_request, key) => maxFor(key),
      timeWindow: windowMs,
      errorResponseBuilder: (_request, context) =>
        new AppError(429, `Rate limit exceeded: at most ${context.max} requests per ${windowMs / 1000} s; retry in ${context.after}`),
    }),
  );

  // 3. 401, then 404, then 403, in the contract's order, before the body is even parsed.
  app.addHook('onRequest', async (request) => {
    const access = request.routeOptions.config.access;
    if (!access || 'public' in access) return;
    const principal = request.principal;
    if (!principal) {
      if (access.scope === 'account' && access.answersSignedOut && request.headers.authorization === undefined) return;
      throw unauthorized(request.authFailure ?? 'Authentication required');
    }
    // A browser attaches the cookie by itself, so a cookie-authenticated write must prove it
    // comes from the dashboard's own page.
    if (principal.kind === 'session') checkCsrf(request, principal.csrfToken, app.config.publicUrl);
    if (access.scope === 'account') checkAccount(principal, access);
    else await checkWebsite(app, principals, request, principal, access);
  });
}

export default fp(routeGuard, { name: 'route-guard', dependencies: ['database'] });
