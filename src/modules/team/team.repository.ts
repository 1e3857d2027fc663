import type { Kysely, Selectable } from 'kysely';
import type { Database, InvitationsTable } from '../../db/schema.ts';

export type InvitationRow = Selectable<InvitationsTable>;

export async function listMembers(db: Kysely<Database>, websiteId: string) {
  return db
    .selectFrom('website_members')
    .innerJoin('accounts', 'accounts.id', 'website_members.account_id')
    .select(['accounts.id', 'accounts.name', 'accounts.email', 'website_members.role', 'website_members.created_at'])
    .where('website_members.website_id', '=', websiteId)
    .orderBy('website_members.created_at')
    .orderBy('accounts.id')
    .execute();
}

export async function findMemberByEmail(db: Kysely<Database>, websiteId: string, email: string) {
  return db
    .selectFrom('website_members')
    .innerJoin('accounts', 'accounts.id', 'website_members.account_id')
    .select(['accounts.id', 'website_members.role'])
    .where('website_members.website_id', '=', websiteId)
    .where('accounts.email', '=', email)
    .executeTakeFirst();
}

export async function findMemberById(db: Kysely<Database>, websiteId: string, accountId: string) {
  return db
    .selectFrom('website_members')
    .select(['account_id as id', 'role'])
    .where('website_id', '=', websiteId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

export async function deleteMember(db: Kysely<Database>, websiteId: string, accountId: string): Promise<void> {
  await db.deleteFrom('website_members').where('website_id', '=', websiteId).where('account_id', '=', accountId).execute();
}

export async function insertMember(db: Kysely<Database>, websiteId: string, accountId: string, role: string, at: string) {
  await db.insertInto('website_members').values({ website_id: websiteId, account_id: accountId, role, created_at: at }).execute();
}

export async function listWebsiteInvitations(db: Kysely<Database>, websiteId: string): Promise<InvitationRow[]> {
  return db.selectFrom('invitations').selectAll().where('website_id', '=', websiteId).orderBy('created_at').orderBy('id').execute();
}

export async function findInvitationByEmail(db: Kysely<Database>, websiteId: string, email: string) {
  return db.selectFrom('invitations').selectAll().where('website_id', '=', websiteId).where('email', '=', email).executeTakeFirst();
}

export async function insertInvitation(db: Kysely<Database>, row: InvitationRow): Promise<void> {
  await db.insertInto('invitations').values(row).execute();
}

export async function deleteInvitation(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('invitations').where('id', '=', id).execute();
}

export async function listInvitationsForEmail(db: Kysely<Database>, email: string) {
  return db
    .selectFrom('invitations')
    .innerJoin('websites', 'websites.id', 'invitations.website_id')
    .select(['invitations.id', 'invitations.website_id', 'websites.domain', 'invitations.role', 'invitations.created_at'])
    .where('invitations.email', '=', email)
    .orderBy('invitations.created_at')
    .execute();
}

export async function findInvitationForEmail(db: Kysely<Database>, id: string, email: string) {
  return db.selectFrom('invitations').selectAll().where('id', '=', id).where('email', '=', email).executeTakeFirst();
}

/** The invitation a mailed link names (by its token's digest), with the website's domain. */
export async function findInvitationByLinkDigest(db: Kysely<Database>, digest: string) {
  return db
    .selectFrom('invitations')
    .innerJoin('websites', 'websites.id', 'invitations.website_id')
    .selectAll('invitations')
    .select('websites.domain')
    .where('invitations.link_digest', '=', digest)
    .executeTakeFirst();
}
