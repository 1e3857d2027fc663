import { createHmac, timingSafeEqual } from 'node:crypto';
import { WebhookSignatureError } from './adapter.ts';

// HMAC-SHA256 webhook signatures, compared in constant time so a forger learns nothing from how
// long a wrong guess takes.

export function hmacSha256(key: string | Buffer, ...parts: (string | Buffer)[]): Buffer {
  const hmac = createHmac('sha256', key);
  for (const part of parts) hmac.update(part);
  return hmac.digest();
}

/** True when `given` (in `encoding`) is exactly the expected digest. */
export function digestMatches(expected: Buffer, given: string, encoding: 'hex' | 'base64'): boolean {
  const pattern = encoding === 'hex' ? /^[0-9a-f]+$/i : /^[A-Za-z0-9+/]+=*$/;
  if (!pattern.test(given)) return false;
  const decoded = Buffer.from(given, encoding);
  return decoded.length === expected.length && timingSafeEqual(decoded, expected);
}

export function requireSecret(secret: string): string {
  if (typeof secret !== 'string' || secret === '') throw new WebhookSignatureError('no webhook secret is configured for this integration');
  return secret;
}

/** Rejects a signed timestamp (epoch seconds) further than `toleranceSeconds` from now, either way. */
export function assertFresh(timestampSeconds: number, now: Date, toleranceSeconds: number): void {
  if (!Number.isFinite(timestampSeconds)) throw new WebhookSignatureError('the signature has no valid timestamp');
  const age = now.getTime() / 1000 - timestampSeconds;
  if (Math.abs(age) > toleranceSeconds) {
    throw new WebhookSignatureError(`the signature's timestamp is ${Math.round(age)} s from now (at most ${toleranceSeconds} s allowed): a replay or a wrong clock`);
  }
}
