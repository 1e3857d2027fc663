import type { Kysely } from 'kysely';
import { digestCredential, displayKey, generateCredential } from '../../auth/tokens.ts';
import { lockWebsite } from '../../db/locks.ts';
import type { Database } from '../../db/schema.ts';
import { badRequest, notFound } from '../../errors.ts';
import { newId } from '../../lib/ids.ts';
import { presentApiKey } from './api-keys.presenter.ts';
import * as repo from './api-keys.repository.ts';

export async function listApiKeys(db: Kysely<Database>, websiteId: string) {
  return (await repo.listActiveKeys(db, websiteId)).map(presentApiKey);
}

export async function createApiKey(db: Kysely<Database>, websiteId: string, name: string, limit: number) {
  const raw = generateCredential('apiKey');
  const row: repo.ApiKeyRow = {
    id: newId(),
    website_id: websiteId,
    name,
    digest: digestCredential(raw),
    display_key: displayKey(raw),
    last_used_at: null,
    revoked_at: null,
    created_at: new Date().toISOString(),
  };
  await db.transaction().execute(async (trx) => {
    await lockWebsite(trx, websiteId);
    if ((await repo.countActiveKeys(trx, websiteId)) >= limit) {
      throw badRequest(`API key limit reached: a website may have at most ${limit} keys; revoke one first`);
    }
    await repo.insertKey(trx, row);
  });
  return { ...presentApiKey(row), key: raw };
}

/** Same id and name, new secret; the old secret stops working at once. */
export async function rollApiKey(db: Kysely<Database>, websiteId: string, keyId: string) {
  const raw = generateCredential('apiKey');
  return db.transaction().execute(async (trx) => {
    const display = displayKey(raw);
    if (!(await repo.replaceSecret(trx, websiteId, keyId, digestCredential(raw), display))) throw notFound('API key not found');
    const row = await repo.findActiveKey(trx, websiteId, keyId);
    if (!row) throw notFound('API key not found');
    return { ...presentApiKey(row), key: raw };
  });
}

export async function revokeApiKey(db: Kysely<Database>, websiteId: string, keyId: string) {
  if (!(await repo.revokeKey(db, websiteId, keyId, new Date().toISOString()))) throw notFound('API key not found');
  return { deleted: true };
}
