import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { encodeBase62, randomBase62 } from '../lib/base62.ts';

// Credential format (contract section 3): prefix + 30 random base62 characters + 6 base62
// characters of a CRC32 over everything before them. The checksum lets us refuse a typo or a
// forged value without touching the database; only a SHA-256 digest is ever stored.

export type CredentialKind = 'token' | 'apiKey';

const PREFIX: Record<CredentialKind, string> = { token: 'dft_', apiKey: 'df_' };
const RANDOM_LENGTH = 30;
const CHECKSUM_LENGTH = 6;
const FORMAT = /^(dft|df)_([0-9A-Za-z]{36})$/;

function checksum(body: string): string {
  return encodeBase62(crc32(body), CHECKSUM_LENGTH);
}

export function generateCredential(kind: CredentialKind): string {
  const body = PREFIX[kind] + randomBase62(RANDOM_LENGTH);
  return body + checksum(body);
}

/** The credential's kind when its format and checksum are right, otherwise null. */
export function parseCredential(raw: string): CredentialKind | null {
  const match = FORMAT.exec(raw);
  if (!match) return null;
  const body = raw.slice(0, raw.length - CHECKSUM_LENGTH);
  if (checksum(body) !== raw.slice(-CHECKSUM_LENGTH)) return null;
  return match[1] === 'dft' ? 'token' : 'apiKey';
}

export function digestCredential(raw: string): string {
  return createHash('sha256').update(raw).digest('hex');
}

/** The masked form shown in lists: prefix, first 4, "...", last 4. */
export function displayKey(raw: string): string {
  const prefixEnd = raw.indexOf('_') + 1;
  return `${raw.slice(0, prefixEnd + 4)}...${raw.slice(-4)}`;
}
