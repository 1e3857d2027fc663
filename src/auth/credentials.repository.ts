import type { Kysely } from 'kysely';
import { prepareQuery } from '../db/prepared.ts';
import type { Database } from '../db/schema.ts';

// Lookups behind authentication: by digest only, never by raw value.

const TOKEN_COLUMNS = [
  'access_tokens.id',
  'access_tokens.account_id',
  'access_tokens.permissions',
  'access_tokens.website_ids',
  'access_tokens.expires_at',
  'access_tokens.last_used_at',
] as const;

const activeToken = prepareQuery((db, digest: string) =>
  db.selectFrom('access_tokens').select(TOKEN_COLUMNS).where('digest', '=', digest).where('revoked_at', 'is', null),
);

// The role rides along with the token on website routes: one statement instead of two.
const activeTokenWithRole = prepareQuery((db, digest: string, websiteId: string) =>
  db
    .selectFrom('access_tokens')
    .leftJoin('website_members', (join) =>
      join.onRef('website_members.account_id', '=', 'access_tokens.account_id').on('website_members.website_id', '=', websiteId),
    )
    .select([...TOKEN_COLUMNS, 'website_members.role'])
    .where('access_tokens.digest', '=', digest)
    .where('access_tokens.revoked_at', 'is', null),
);

/** The token by digest; with a websiteId, also its account's role there (null: none). */
export async function findActiveTokenByDigest(db: Kysely<Database>, digest: string, websiteId?: string) {
  if (websiteId !== undefined) return activeTokenWithRole.first(db, digest, websiteId);
  const row = await activeToken.first(db, digest);
  return row && { ...row, role: null };
}

const activeApiKey = prepareQuery((db, digest: string) =>
  db
    .selectFrom('api_keys')
    .innerJoin('website_members', (join) =>
      join.onRef('website_members.website_id', '=', 'api_keys.website_id').on('website_members.role', '=', 'owner'),
    )
    .select(['api_keys.id', 'api_keys.website_id', 'api_keys.last_used_at', 'website_members.account_id as owner_id'])
    .where('api_keys.digest', '=', digest)
    .where('api_keys.revoked_at', 'is', null),
);

export async function findActiveApiKeyByDigest(db: Kysely<Database>, digest: string) {
  return activeApiKey.first(db, digest);
}

export async function touchToken(db: Kysely<Database>, id: string, at: string): Promise<void> {
  await db.updateTable('access_tokens').set({ last_used_at: at }).where('id', '=', id).execute();
}

export async function touchApiKey(db: Kysely<Database>, id: string, at: string): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
}

const memberRole = prepareQuery((db, accountId: string, websiteId: string) =>
  db.selectFrom('website_members').select('role').where('account_id', '=', accountId).where('website_id', '=', websiteId),
);

export async function findRole(db: Kysely<Database>, accountId: string, websiteId: string): Promise<string | undefined> {
  return (await memberRole.first(db, accountId, websiteId))?.role;
}

const SESSION_COLUMNS = [
  'dashboard_sessions.id',
  'dashboard_sessions.account_id',
  'dashboard_sessions.signed_in_at',
  'dashboard_sessions.last_seen_at',
  'dashboard_sessions.expires_at',
] as const;

const activeSession = prepareQuery((db, digest: string) =>
  db.selectFrom('dashboard_sessions').select(SESSION_COLUMNS).where('digest', '=', digest).where('revoked_at', 'is', null),
);

const activeSessionWithRole = prepareQuery((db, digest: string, websiteId: string) =>
  db
    .selectFrom('dashboard_sessions')
    .leftJoin('website_members', (join) =>
      join.onRef('website_members.account_id', '=', 'dashboard_sessions.account_id').on('website_members.website_id', '=', websiteId),
    )
    .select([...SESSION_COLUMNS, 'website_members.role'])
    .where('dashboard_sessions.digest', '=', digest)
    .where('dashboard_sessions.revoked_at', 'is', null),
);

/** The dashboard session by the digest of its cookie; with a websiteId, also the account's role there. */
export async function findActiveSessionByDigest(db: Kysely<Database>, digest: string, websiteId?: string) {
  if (websiteId !== undefined) return activeSessionWithRole.first(db, digest, websiteId);
  const row = await activeSession.first(db, digest);
  return row && { ...row, role: null };
}

export async function touchSession(db: Kysely<Database>, id: string, at: string): Promise<void> {
  await db.updateTable('dashboard_sessions').set({ last_seen_at: at }).where('id', '=', id).execute();
}
