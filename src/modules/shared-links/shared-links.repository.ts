import type { Kysely, Selectable, Updateable } from 'kysely';
import type { Database, SharedLinksTable } from '../../db/schema.ts';

export type SharedLinkRow = Selectable<SharedLinksTable>;

const active = (db: Kysely<Database>, websiteId: string) =>
  db.selectFrom('shared_links').where('website_id', '=', websiteId).where('revoked_at', 'is', null);

export async function listActiveLinks(db: Kysely<Database>, websiteId: string): Promise<SharedLinkRow[]> {
  return active(db, websiteId).selectAll().orderBy('created_at').orderBy('id').execute();
}

export async function countActiveLinks(db: Kysely<Database>, websiteId: string): Promise<number> {
  const row = await active(db, websiteId).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function findActiveLink(db: Kysely<Database>, websiteId: string, linkId: string): Promise<SharedLinkRow | undefined> {
  return active(db, websiteId).selectAll().where('id', '=', linkId).executeTakeFirst();
}

export async function insertLink(db: Kysely<Database>, row: SharedLinkRow): Promise<void> {
  await db.insertInto('shared_links').values(row).execute();
}

/** False when the link is not an active link of this website (unknown, foreign, or revoked meanwhile). */
export async function updateLink(db: Kysely<Database>, websiteId: string, linkId: string, changes: Updateable<SharedLinksTable>): Promise<boolean> {
  const result = await db
    .updateTable('shared_links')
    .set(changes)
    .where('id', '=', linkId)
    .where('website_id', '=', websiteId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export interface OpenLink {
  id: string;
  websiteId: string;
  name: string;
  passwordHash: string | null;
}

/**
 * The link a public URL names, when it may open now: not revoked, and its website's public
 * dashboard switched on. Read on every request of the shared page, so revoking or switching off
 * ends access at once.
 */
export async function findOpenLink(db: Kysely<Database>, digest: string): Promise<OpenLink | undefined> {
  const row = await db
    .selectFrom('shared_links as l')
    .innerJoin('websites as w', 'w.id', 'l.website_id')
    .select(['l.id', 'l.website_id', 'l.name', 'l.password_hash', 'w.is_public_dashboard_enabled'])
    .where('l.digest', '=', digest)
    .where('l.revoked_at', 'is', null)
    .executeTakeFirst();
  if (!row || !row.is_public_dashboard_enabled) return undefined;
  return { id: row.id, websiteId: row.website_id, name: row.name, passwordHash: row.password_hash };
}
