import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';

// Lookups behind authentication: by digest only, never by raw value.

export async function findActiveTokenByDigest(db: Kysely<Database>, digest: string) {
  return db
    .selectFrom('access_tokens')
    .select(['id', 'account_id', 'permissions', 'website_ids', 'expires_at', 'last_used_at'])
    .where('digest', '=', digest)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
}

export async function findActiveApiKeyByDigest(db: Kysely<Database>, digest: string) {
  return db
    .selectFrom('api_keys')
    .innerJoin('website_members', (join) =>
      join.onRef('website_members.website_id', '=', 'api_keys.website_id').on('website_members.role', '=', 'owner'),
    )
    .select(['api_keys.id', 'api_keys.website_id', 'api_keys.last_used_at', 'website_members.account_id as owner_id'])
    .where('api_keys.digest', '=', digest)
    .where('api_keys.revoked_at', 'is', null)
    .executeTakeFirst();
}

export async function touchToken(db: Kysely<Database>, id: string, at: string): Promise<void> {
  await db.updateTable('access_tokens').set({ last_used_at: at }).where('id', '=', id).execute();
}

export async function touchApiKey(db: Kysely<Database>, id: string, at: string): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
}

export async function findRole(db: Kysely<Database>, accountId: string, websiteId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('website_members')
    .select('role')
    .where('account_id', '=', accountId)
    .where('website_id', '=', websiteId)
    .executeTakeFirst();
  return row?.role;
}
