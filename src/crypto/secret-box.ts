import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Keyring } from './keyring.ts';

// AES-256-GCM with a random 96-bit nonce. The additional authenticated data binds a ciphertext
// to where it belongs (for credentials: website and provider), so a ciphertext copied into
// another row fails authentication instead of decrypting.

const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export class SecretBoxError extends Error {}

export interface Sealed {
  keyId: string;
  /** base64(nonce | tag | ciphertext) */
  ciphertext: string;
}

export function seal(keyring: Keyring, plaintext: string, associatedData: string): Sealed {
  const key = keyring.keys.get(keyring.currentId)!;
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(associatedData, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return { keyId: keyring.currentId, ciphertext: Buffer.concat([nonce, cipher.getAuthTag(), body]).toString('base64') };
}

export function open(keyring: Keyring, sealed: Sealed, associatedData: string): string {
  const key = keyring.keys.get(sealed.keyId);
  if (!key) throw new SecretBoxError(`no key with id ${sealed.keyId} is configured`);
  const raw = Buffer.from(sealed.ciphertext, 'base64');
  if (raw.length < NONCE_BYTES + TAG_BYTES) throw new SecretBoxError('ciphertext is truncated');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, NONCE_BYTES));
  decipher.setAAD(Buffer.from(associatedData, 'utf8'));
  decipher.setAuthTag(raw.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(raw.subarray(NONCE_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretBoxError('ciphertext does not authenticate under its key and context');
  }
}
