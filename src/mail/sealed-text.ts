import type { Keyring } from '../crypto/keyring.ts';
import { open, seal } from '../crypto/secret-box.ts';

// The text of a mail that carries a one-time link (a password reset, an invitation) waits in
// mail_outbox until the worker sends it, which can take an hour while SMTP fails. It is stored
// sealed with the credential keys, bound to its outbox row, so the database never holds the
// link's token in the clear; the worker opens it just before sending.

const PREFIX = 'sealed:v1:';
const context = (outboxId: string) => `sightline:mail:v1:${outboxId}`;

export function sealMailText(keyring: Keyring, outboxId: string, text: string): string {
  const sealed = seal(keyring, text, context(outboxId));
  return `${PREFIX}${sealed.keyId}:${sealed.ciphertext}`;
}

export function isSealedMailText(text: string): boolean {
  return text.startsWith(PREFIX);
}

/** The text to send: opened when sealed (a wrong key throws SecretBoxError), as stored otherwise. */
export function mailTextToSend(keyring: Keyring | null, row: { id: string; text: string }): string {
  if (!isSealedMailText(row.text)) return row.text;
  if (!keyring) throw new Error('a sealed mail text needs the credential keys to be opened');
  const rest = row.text.slice(PREFIX.length);
  const colon = rest.indexOf(':');
  return open(keyring, { keyId: rest.slice(0, colon), ciphertext: rest.slice(colon + 1) }, context(row.id));
}
