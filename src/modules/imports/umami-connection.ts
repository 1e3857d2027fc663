import type { Kysely } from 'kysely';
import type { Keyring } from '../../crypto/keyring.ts';
import { SecretBoxError, open, seal } from '../../crypto/secret-box.ts';
import type { Database } from '../../db/schema.ts';
import { ImportFileError } from './import-job.ts';

// An Umami import's source, kept for its job: the connection URL (it carries the database
// password) and the Umami website id, sealed with the credential keys (AES-256-GCM, bound to the
// import so a ciphertext copied to another row does not open). Opened only by the job; deleted
// when the import ends (import-job.ts) or is deleted.

export interface UmamiSource {
  databaseUrl: string;
  umamiWebsiteId: string;
}

const context = (importId: string, websiteId: string) => `sightline:import-connection:v1:${websiteId}:${importId}`;

export function sealUmamiSource(keyring: Keyring, importId: string, websiteId: string, source: UmamiSource) {
  const sealed = seal(keyring, JSON.stringify(source), context(importId, websiteId));
  return { import_id: importId, website_id: websiteId, key_id: sealed.keyId, ciphertext: sealed.ciphertext };
}

/** The import's source; an ImportFileError when it is gone or does not open with the configured keys. */
export async function openUmamiConnection(db: Kysely<Database>, keyring: Keyring, importId: string, websiteId: string): Promise<UmamiSource> {
  const row = await db.selectFrom('import_connections').select(['key_id', 'ciphertext']).where('import_id', '=', importId).executeTakeFirst();
  if (!row) throw new ImportFileError('the connection to the Umami database is gone; delete the import and import again');
  try {
    return JSON.parse(open(keyring, { keyId: row.key_id, ciphertext: row.ciphertext }, context(importId, websiteId))) as UmamiSource;
  } catch (error) {
    if (error instanceof SecretBoxError) throw new ImportFileError(`the connection to the Umami database cannot be opened with the configured keys (${error.message}); delete the import and import again`);
    throw error;
  }
}
