import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { forbidden } from '../errors.ts';

// Cookie-authenticated writes: the synchroniser token (X-CSRF-Token, derived from the session
// cookie, which another site can neither read nor guess) and, when the browser names it, an origin
// that is the server's own. Reads are left alone: SameSite=Lax already keeps the cookie off
// cross-site subrequests, and a read changes nothing.

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
export const CSRF_HEADER = 'x-csrf-token';

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function ownOrigins(request: FastifyRequest, publicUrl: string): string[] {
  return [new URL(publicUrl).origin, `${request.protocol}://${request.host}`];
}

export function checkCsrf(request: FastifyRequest, expected: string, publicUrl: string): void {
  if (SAFE_METHODS.has(request.method)) return;
  const origin = request.headers.origin;
  if (origin !== undefined && !ownOrigins(request, publicUrl).includes(origin)) {
    throw forbidden('Cross-origin request refused: the Origin header names another site');
  }
  if (request.headers['sec-fetch-site'] === 'cross-site') throw forbidden('Cross-site request refused');
  const sent = request.headers[CSRF_HEADER];
  if (typeof sent !== 'string' || !sameText(sent, expected)) {
    throw forbidden('Missing or wrong X-CSRF-Token header: a signed-in write must send the token from GET /api/v1/dashboard/session');
  }
}
