import { createHash, createHmac } from 'node:crypto';
import { randomBase62 } from '../lib/base62.ts';

// A dashboard session's cookie value and what is derived from it. Only the digest is stored; the
// CSRF token is an HMAC keyed by the cookie value, so it needs no storage and only the holder of
// the cookie (the page the server handed it to) can know it.

export const SESSION_COOKIE = 'sightline_session';
const SESSION_FORMAT = /^dss_[0-9A-Za-z]{43}$/;

export function generateSessionSecret(): string {
  return `dss_${randomBase62(43)}`;
}

export function isSessionSecret(value: string): boolean {
  return SESSION_FORMAT.test(value);
}

export function digestSecret(raw: string): string {
  return createHash('sha256').update(raw).digest('hex');
}

export function csrfTokenFor(sessionSecret: string): string {
  return createHmac('sha256', sessionSecret).update('sightline-csrf').digest('base64url');
}

/** A one-time link token (password reset, invitation): random, only its digest stored. */
export function generateLinkToken(): string {
  return randomBase62(43);
}

/** A session ends 30 days after its sign-in, or after 7 days unused, whichever comes first. */
export const SESSION_LIFETIME_MS = 30 * 24 * 3600_000;
export const SESSION_IDLE_MS = 7 * 24 * 3600_000;
/** Deleting a website needs the password entered within this long. */
export const RECENT_SIGN_IN_MS = 10 * 60_000;

export function sessionExpired(row: { expires_at: string; last_seen_at: string }, now: number): boolean {
  return Date.parse(row.expires_at) <= now || Date.parse(row.last_seen_at) + SESSION_IDLE_MS <= now;
}
