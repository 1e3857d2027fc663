import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import { prepareQuery } from '../../db/prepared.ts';
import type { Database, WebsitesTable } from '../../db/schema.ts';

export type WebsiteRow = Selectable<WebsitesTable>;
export type WebsiteWithRole = WebsiteRow & { role: string };

export async function insertWebsite(db: Kysely<Database>, row: Insertable<WebsitesTable>, ownerId: string): Promise<void> {
  await db.insertInto('websites').values(row).execute();
  await db
    .insertInto('website_members')
    .values({ website_id: row.id, account_id: ownerId, role: 'owner', created_at: row.created_at })
    .execute();
}

/** Websites the account has a role on; `onlyIds` narrows to a token's list when not empty. */
export async function listWebsitesForAccount(db: Kysely<Database>, accountId: string, onlyIds: string[]): Promise<WebsiteWithRole[]> {
  let query = db
    .selectFrom('websites')
    .innerJoin('website_members', 'website_members.website_id', 'websites.id')
    .selectAll('websites')
    .select('website_members.role')
    .where('website_members.account_id', '=', accountId);
  if (onlyIds.length > 0) query = query.where('websites.id', 'in', onlyIds);
  return query.orderBy('websites.created_at').orderBy('websites.id').execute();
}

const websiteById = prepareQuery((db, websiteId: string) => db.selectFrom('websites').selectAll().where('id', '=', websiteId));

export async function findWebsite(db: Kysely<Database>, websiteId: string): Promise<WebsiteRow | undefined> {
  return websiteById.first(db, websiteId);
}

/** Whether the account owns a website with this domain (other than `exceptId`). */
export async function ownerHasDomain(db: Kysely<Database>, ownerId: string, domain: string, exceptId?: string): Promise<boolean> {
  let query = db
    .selectFrom('websites')
    .innerJoin('website_members', 'website_members.website_id', 'websites.id')
    .select('websites.id')
    .where('website_members.account_id', '=', ownerId)
    .where('website_members.role', '=', 'owner')
    .where('websites.domain', '=', domain);
  if (exceptId) query = query.where('websites.id', '!=', exceptId);
  return (await query.executeTakeFirst()) !== undefined;
}

export async function findOwnerId(db: Kysely<Database>, websiteId: string): Promise<string> {
  const row = await db
    .selectFrom('website_members')
    .select('account_id')
    .where('website_id', '=', websiteId)
    .where('role', '=', 'owner')
    .executeTakeFirstOrThrow();
  return row.account_id;
}

export async function updateWebsite(db: Kysely<Database>, websiteId: string, changes: Updateable<WebsitesTable>): Promise<void> {
  await db.updateTable('websites').set(changes).where('id', '=', websiteId).execute();
}

/** Ids of the websites an account has any role on, for checking a token's website list. */
export async function accessibleWebsiteIds(db: Kysely<Database>, accountId: string): Promise<Set<string>> {
  const rows = await db.selectFrom('website_members').select('website_id').where('account_id', '=', accountId).execute();
  return new Set(rows.map((r) => r.website_id));
}

export interface WebsiteWithOwner {
  id: string;
  domain: string;
  ownerId: string;
  ownerEmail: string;
}

/** Every website with this domain, whichever account owns it (domains are unique per owner only). */
export async function findWebsitesByDomain(db: Kysely<Database>, domain: string): Promise<WebsiteWithOwner[]> {
  return db
    .selectFrom('websites')
    .innerJoin('website_members', (join) => join.onRef('website_members.website_id', '=', 'websites.id').on('website_members.role', '=', 'owner'))
    .innerJoin('accounts', 'accounts.id', 'website_members.account_id')
    .select(['websites.id', 'websites.domain', 'accounts.id as ownerId', 'accounts.email as ownerEmail'])
    .where('websites.domain', '=', domain)
    .orderBy('accounts.email')
    .execute();
}

export async function findWebsiteTimezone(db: Kysely<Database>, websiteId: string): Promise<string | undefined> {
  const row = await db.selectFrom('websites').select('timezone').where('id', '=', websiteId).executeTakeFirst();
  return row?.timezone;
}
