import type { Kysely, Selectable } from 'kysely';
import type { ApiKeysTable, Database } from '../../db/schema.ts';

export type ApiKeyRow = Selectable<ApiKeysTable>;

const active = (db: Kysely<Database>, websiteId: string) =>
  db.selectFrom('api_keys').where('website_id', '=', websiteId).where('revoked_at', 'is', null);

export async function listActiveKeys(db: Kysely<Database>, websiteId: string): Promise<ApiKeyRow[]> {
  return active(db, websiteId).selectAll().orderBy('created_at').orderBy('id').execute();
}

export async function countActiveKeys(db: Kysely<Database>, websiteId: string): Promise<number> {
  const row = await active(db, websiteId).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function findActiveKey(db: Kysely<Database>, websiteId: string, keyId: string): Promise<ApiKeyRow | undefined> {
  return active(db, websiteId).selectAll().where('id', '=', keyId).executeTakeFirst();
}

export async function insertKey(db: Kysely<Database>, row: ApiKeyRow): Promise<void> {
  await db.insertInto('api_keys').values(row).execute();
}

/** False when the key is not an active key of this website (unknown, foreign, or revoked meanwhile). */
export async function replaceSecret(
  db: Kysely<Database>,
  websiteId: string,
  keyId: string,
  digest: string,
  display: string,
): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ digest, display_key: display, last_used_at: null })
    .where('id', '=', keyId)
    .where('website_id', '=', websiteId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function revokeKey(db: Kysely<Database>, websiteId: string, keyId: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('id', '=', keyId)
    .where('website_id', '=', websiteId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
