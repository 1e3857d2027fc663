import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { Keyring } from '../../crypto/keyring.ts';
import { randomBase62 } from '../../lib/base62.ts';

// A shared link's secret is the last part of its URL: shr_ and 32 base62 characters (190 bits),
// stored only as a SHA-256 digest, like tokens; its prefix keeps it out of logs (redaction.ts). After a link's password is entered, the browser keeps a cookie
// that proves it for that link only (its Path is the link's API path): an expiry and an HMAC over
// the link's id, the expiry and the current password hash, so a new password or a cleared one
// ends every unlock made before. Revoking or switching the website's sharing off needs no cookie
// change: every request reads the link first.

export const SHARE_COOKIE = 'sightline_share';
export const UNLOCK_LIFETIME_MS = 24 * 60 * 60 * 1000;
const SLUG_FORMAT = /^shr_[0-9A-Za-z]{32}$/;

export function generateSlug(): string {
  return `shr_${randomBase62(32)}`;
}

export function isSlug(value: string): boolean {
  return SLUG_FORMAT.test(value);
}

export function digestSlug(slug: string): string {
  return createHash('sha256').update(`sightline-share:${slug}`).digest('hex');
}

export function displaySlug(slug: string): string {
  return `${slug.slice(0, 8)}...${slug.slice(-4)}`;
}

/** The API path a link's unlock cookie is sent to, and nowhere else. */
export function shareApiPath(slug: string): string {
  return `/api/v1/share/${slug}`;
}

function macKey(keyring: Keyring): Buffer {
  const key = keyring.keys.get(keyring.currentId)!;
  return createHmac('sha256', key).update('sightline-share-cookie').digest();
}

function mac(keyring: Keyring, linkId: string, expiresAt: number, passwordHash: string): string {
  return createHmac('sha256', macKey(keyring)).update(`${linkId}.${expiresAt}.${passwordHash}`).digest('base64url');
}

export function signUnlock(keyring: Keyring, linkId: string, passwordHash: string, now = Date.now()): string {
  const expiresAt = now + UNLOCK_LIFETIME_MS;
  return `${expiresAt}.${mac(keyring, linkId, expiresAt, passwordHash)}`;
}

export function verifyUnlock(keyring: Keyring, cookie: string | undefined, linkId: string, passwordHash: string, now = Date.now()): boolean {
  const match = /^(\d{13})\.([A-Za-z0-9_-]{43})$/.exec(cookie ?? '');
  if (!match) return false;
  const expiresAt = Number(match[1]);
  if (expiresAt <= now) return false;
  const expected = Buffer.from(mac(keyring, linkId, expiresAt, passwordHash));
  const given = Buffer.from(match[2]!);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
