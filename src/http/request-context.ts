import type { FastifyRequest } from 'fastify';
import type { Principal, TokenPrincipal, WebsiteAccess } from '../auth/principal.ts';

// What the route guard established, typed for handlers. Reaching a handler without it means a
// route declared the wrong access, which is a programming error, not a client error.

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error(`route ${request.routeOptions.url} reached its handler without a principal`);
  return request.principal;
}

export function tokenOf(request: FastifyRequest): TokenPrincipal {
  const principal = principalOf(request);
  if (principal.kind !== 'token') throw new Error(`route ${request.routeOptions.url} admits API keys but needs a token`);
  return principal;
}

export function websiteOf(request: FastifyRequest): WebsiteAccess {
  if (!request.websiteAccess) throw new Error(`route ${request.routeOptions.url} is not website-scoped`);
  return request.websiteAccess;
}
