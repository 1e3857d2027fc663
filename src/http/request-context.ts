import type { FastifyRequest } from 'fastify';
import type { AccountPrincipal, Principal, SessionPrincipal, WebsiteAccess } from '../auth/principal.ts';

// What the route guard established, typed for handlers. Reaching a handler without it means a
// route declared the wrong access, which is a programming error, not a client error.

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error(`route ${request.routeOptions.url} reached its handler without a principal`);
  return request.principal;
}

/** The account caller: an account token or a dashboard session. */
export function accountCallerOf(request: FastifyRequest): AccountPrincipal {
  const principal = principalOf(request);
  if (principal.kind === 'apiKey') throw new Error(`route ${request.routeOptions.url} admits API keys but needs an account caller`);
  return principal;
}

export function sessionOf(request: FastifyRequest): SessionPrincipal {
  const principal = principalOf(request);
  if (principal.kind !== 'session') throw new Error(`route ${request.routeOptions.url} needs a dashboard session`);
  return principal;
}

export function websiteOf(request: FastifyRequest): WebsiteAccess {
  if (!request.websiteAccess) throw new Error(`route ${request.routeOptions.url} is not website-scoped`);
  return request.websiteAccess;
}
