import type { Kysely, Selectable } from 'kysely';
import type { AccessTokensTable, Database } from '../../db/schema.ts';

export type AccessTokenRow = Selectable<AccessTokensTable>;

export async function listActiveTokens(db: Kysely<Database>, accountId: string): Promise<AccessTokenRow[]> {
  return db
    .selectFrom('access_tokens')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function findActiveToken(db: Kysely<Database>, accountId: string, tokenId: string): Promise<AccessTokenRow | undefined> {
  return db
    .selectFrom('access_tokens')
    .selectAll()
    .where('id', '=', tokenId)
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
}

export async function countActiveTokens(db: Kysely<Database>, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('access_tokens')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertToken(db: Kysely<Database>, row: AccessTokenRow): Promise<void> {
  await db.insertInto('access_tokens').values(row).execute();
}

/** Revokes an active token of this account; false when there is none. */
export async function revokeToken(db: Kysely<Database>, accountId: string, tokenId: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('access_tokens')
    .set({ revoked_at: at })
    .where('id', '=', tokenId)
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
