import type { Kysely } from 'kysely';
import type { Keyring } from '../../crypto/keyring.ts';
import { SecretBoxError, open, seal } from '../../crypto/secret-box.ts';
import type { Database } from '../../db/schema.ts';
import { sampleCiphertextPerKey, sampleWebhookSecretPerKey } from './integrations.repository.ts';

// Provider credentials are sealed as one JSON object per (website, provider) and bound to that
// pair; the webhook signing secret the owner pastes is sealed apart, bound to the pair under its
// own context, so connecting again (new credentials) keeps it. Both are opened only by code that
// talks to the provider or checks its signature, never for a response.

const context = (websiteId: string, provider: string) => `sightline:integration:v1:${websiteId}:${provider}`;
const webhookContext = (websiteId: string, provider: string) => `sightline:integration-webhook:v1:${websiteId}:${provider}`;

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

export function sealWebhookSecret(keyring: Keyring, websiteId: string, provider: string, secret: string) {
  return seal(keyring, secret, webhookContext(websiteId, provider));
}

export interface SealedWebhookSecret {
  website_id: string;
  provider: string;
  webhook_key_id: string;
  webhook_ciphertext: string;
}

export function openWebhookSecret(keyring: Keyring, row: SealedWebhookSecret): string {
  return open(keyring, { keyId: row.webhook_key_id, ciphertext: row.webhook_ciphertext }, webhookContext(row.website_id, row.provider));
}

export class StoredSecretsError extends Error {}

function unreadable(keyId: string, error: SecretBoxError): StoredSecretsError {
  return new StoredSecretsError(
    `Stored integration credentials (key id ${keyId}) cannot be decrypted: ${error.message}. ` +
      'Set SIGHTLINE_SECRET_KEY to the key they were written with, or list it in SIGHTLINE_PREVIOUS_SECRET_KEYS.',
  );
}

/** At start-up: a wrong or missing key for stored credentials or webhook secrets is a clear error, never garbage. */
export async function assertStoredCredentialsOpen(db: Kysely<Database>, keyring: Keyring): Promise<void> {
  for (const row of await sampleCiphertextPerKey(db)) {
    try {
      openCredentials(keyring, row);
    } catch (error) {
      if (!(error instanceof SecretBoxError)) throw error;
      throw unreadable(row.key_id, error);
    }
  }
  for (const row of await sampleWebhookSecretPerKey(db)) {
    try {
      openWebhookSecret(keyring, row as SealedWebhookSecret);
    } catch (error) {
      if (!(error instanceof SecretBoxError)) throw error;
      throw unreadable(row.webhook_key_id!, error);
    }
  }
}
