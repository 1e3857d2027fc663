import type { FastifyInstance, FastifyReply } from 'fastify';
import { SESSION_COOKIE, SESSION_LIFETIME_MS } from '../../auth/sessions.ts';

// The one place that writes the dashboard's cookie: HttpOnly (no script reads it), SameSite=Lax
// (not sent on cross-site subrequests or posts), Secure when the server is reached over https.

export function setSessionCookie(app: FastifyInstance, reply: FastifyReply, secret: string): void {
  reply.setCookie(SESSION_COOKIE, secret, {
    httpOnly: true,
    sameSite: 'lax',
    secure: app.config.publicUrl.startsWith('https:'),
    path: '/',
    maxAge: SESSION_LIFETIME_MS / 1000,
  });
  reply.header('cache-control', 'no-store');
}

export function clearSessionCookie(app: FastifyInstance, reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'lax', secure: app.config.publicUrl.startsWith('https:'), path: '/' });
}
