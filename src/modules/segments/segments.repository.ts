import type { Kysely, Selectable } from 'kysely';
import type { Database, SegmentsTable } from '../../db/schema.ts';

export type SegmentRow = Selectable<SegmentsTable>;
/** A segment with its owner's name. */
export type SegmentWithOwner = SegmentRow & { owner_name: string };

const withOwner = (db: Kysely<Database>) =>
  db.selectFrom('segments').innerJoin('accounts', 'accounts.id', 'segments.owner_id').selectAll('segments').select('accounts.name as owner_name');

/** The website's segments the account sees: its own and the shared ones, by name. */
export async function listVisibleSegments(db: Kysely<Database>, websiteId: string, accountId: string): Promise<SegmentWithOwner[]> {
  return withOwner(db)
    .where('segments.website_id', '=', websiteId)
    .where((eb) => eb.or([eb('segments.owner_id', '=', accountId), eb('segments.shared', '=', true)]))
    .orderBy('segments.name')
    .orderBy('segments.id')
    .execute();
}

/** One segment of the website, if the account sees it (its own, or a shared one). */
export async function findVisibleSegment(
  db: Kysely<Database>,
  websiteId: string,
  segmentId: string,
  accountId: string,
): Promise<SegmentWithOwner | undefined> {
  return withOwner(db)
    .where('segments.website_id', '=', websiteId)
    .where('segments.id', '=', segmentId)
    .where((eb) => eb.or([eb('segments.owner_id', '=', accountId), eb('segments.shared', '=', true)]))
    .executeTakeFirst();
}

export async function countSegments(db: Kysely<Database>, websiteId: string): Promise<number> {
  const row = await db.selectFrom('segments').where('website_id', '=', websiteId).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertSegment(db: Kysely<Database>, row: SegmentRow): Promise<void> {
  await db.insertInto('segments').values({ ...row, shared: Boolean(row.shared) }).execute();
}

export async function updateSegment(
  db: Kysely<Database>,
  websiteId: string,
  segmentId: string,
  changes: { name?: string; filters?: string; shared?: boolean; updated_at: string },
): Promise<void> {
  await db.updateTable('segments').set(changes).where('website_id', '=', websiteId).where('id', '=', segmentId).execute();
}

export async function deleteSegment(db: Kysely<Database>, websiteId: string, segmentId: string): Promise<void> {
  await db.deleteFrom('segments').where('website_id', '=', websiteId).where('id', '=', segmentId).execute();
}
