import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { AppError, notFound, unauthorized } from '../../errors.ts';
import { type OpenLink, findOpenLink } from './shared-links.repository.ts';
import { SHARE_COOKIE, UNLOCK_LIFETIME_MS, digestSlug, isSlug, shareApiPath, signUnlock, verifyUnlock } from './share-secrets.ts';

// Who may read a shared dashboard: whoever holds its URL (the slug in the path) and, for a link
// with a password, the unlock cookie of that link. Nothing else is read: no Authorization header,
// no dashboard session. Every request reads the link again, so a revoked link, a website whose
// sharing was switched off, or a changed password is refused from the next request on.

const NOT_FOUND = 'This shared dashboard does not exist, was revoked, or its website no longer shares it';

declare module 'fastify' {
  interface FastifyRequest {
    sharedLink: OpenLink | null;
  }
}

export async function openLinkOf(app: FastifyInstance, slug: string): Promise<OpenLink> {
  const link = isSlug(slug) ? await findOpenLink(app.db.kysely, digestSlug(slug)) : undefined;
  if (!link) throw notFound(NOT_FOUND);
  return link;
}

export function isUnlocked(app: FastifyInstance, request: FastifyRequest, link: OpenLink): boolean {
  return link.passwordHash === null || verifyUnlock(app.keyring, request.cookies[SHARE_COOKIE], link.id, link.passwordHash);
}

/** onRequest hook of the data routes: the link, opened and unlocked, or 404 / 401. */
export function requireSharedLink(app: FastifyInstance) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('cache-control', 'no-store').header('x-robots-tag', 'noindex');
    const link = await openLinkOf(app, (request.params as { slug: string }).slug);
    if (!isUnlocked(app, request, link)) throw unauthorized('This shared dashboard is protected by a password: enter it first');
    request.sharedLink = link;
  };
}

export function sharedLinkOf(request: FastifyRequest): OpenLink {
  if (!request.sharedLink) throw new Error(`route ${request.routeOptions.url} reached its handler without a shared link`);
  return request.sharedLink;
}

/**
 * The cookie that proves the password for this link only (its Path is the link's API path).
 * SameSite=None over https, so an unlocked embed in another site's iframe keeps working; Lax over
 * plain http, where browsers refuse SameSite=None.
 */
export function setUnlockCookie(app: FastifyInstance, reply: FastifyReply, slug: string, link: OpenLink): void {
  const secure = app.config.publicUrl.startsWith('https:');
  reply.setCookie(SHARE_COOKIE, signUnlock(app.keyring, link.id, link.passwordHash!), {
    httpOnly: true,
    sameSite: secure ? 'none' : 'lax',
    secure,
    path: shareApiPath(slug),
    maxAge: UNLOCK_LIFETIME_MS / 1000,
  });
}

/**
 * Password guessing is throttled per link and client address and per client address, with the
 * rate limiter and the limits of the dashboard's sign-in (SIGN_IN_* settings).
 */
export function unlockThrottles(app: FastifyInstance): preHandlerAsyncHookHandler[] {
  const { perAccount, perAddress, windowMs } = app.config.signInLimit;
  const throttle = (max: number, key: (request: FastifyRequest) => string): preHandlerAsyncHookHandler => {
    const limiter = app.createRateLimit({ keyGenerator: key, max, timeWindow: windowMs });
    return async (request, reply) => {
      const outcome = await limiter(request);
      if (outcome.isAllowed || !outcome.isExceeded) return;
      reply.header('retry-after', String(outcome.ttlInSeconds));
      throw new AppError(429, `Too many attempts: at most ${max} per ${windowMs / 60_000} minutes; retry in ${outcome.ttlInSeconds} s`);
    };
  };
  const slug = (request: FastifyRequest) => String((request.params as { slug?: unknown }).slug ?? '').slice(0, 64);
  return [
    throttle(perAccount, (request) => `share-unlock-link:${digestSlug(slug(request))}:${request.ip}`),
    throttle(perAddress, (request) => `share-unlock-address:${request.ip}`),
  ];
}
