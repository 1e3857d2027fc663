import type { Kysely } from 'kysely';
import type { Keyring } from '../../crypto/keyring.ts';
import { SecretBoxError, open, seal } from '../../crypto/secret-box.ts';
import type { Database } from '../../db/schema.ts';
import { sampleCiphertextPerKey } from './integrations.repository.ts';

// Provider credentials are sealed as one JSON object per (website, provider) and bound to that
// pair. They are opened only by code that talks to the provider, never for a response.

const context = (websiteId: string, provider: string) => `sightline:integration:v1:${websiteId}:${provider}`;

export function sealCredentials(keyring: Keyring, websiteId: string, provider: string, fields: Record<string, string>) {
  return seal(keyring, JSON.stringify(fields), context(websiteId, provider));
}

export function openCredentials(
  keyring: Keyring,
  row: { website_id: string; provider: string; key_id: string; ciphertext: string },
): Record<string, string> {
  const plaintext = open(keyring, { keyId: row.key_id, ciphertext: row.ciphertext }, context(row.website_id, row.provider));
  return JSON.parse(plaintext) as Record<string, string>;
}

export class StoredSecretsError extends Error {}

/** At start-up: a wrong or missing key for stored credentials is a clear error, never garbage. */
export async function assertStoredCredentialsOpen(db: Kysely<Database>, keyring: Keyring): Promise<void> {
  for (const row of await sampleCiphertextPerKey(db)) {
    try {
      openCredentials(keyring, row);
    } catch (error) {
      if (!(error instanceof SecretBoxError)) throw error;
      throw new StoredSecretsError(
        `Stored integration credentials (key id ${row.key_id}) cannot be decrypted: ${error.message}. ` +
          'Set SIGHTLINE_SECRET_KEY to the key they were written with, or list it in SIGHTLINE_PREVIOUS_SECRET_KEYS.',
      );
    }
  }
}
