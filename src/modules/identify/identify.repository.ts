import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { profileEmailOf } from '../../lib/profile-email.ts';

export interface VisitorProfile {
  userId: string;
  name: string | null;
  image: string | null;
  metadata: Record<string, string> | null;
  /** ISO UTC with milliseconds. */
  identifiedAt: string;
}

/** Whether the visitor has any event on the website (events_website_visitor_idx). */
export async function visitorHasEvent(db: Kysely<Database>, websiteId: string, visitorId: string): Promise<boolean> {
  const row = await db
    .selectFrom('events')
    .select('id')
    .where('website_id', '=', websiteId)
    .where('visitor_id', '=', visitorId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

export interface ProfileRow {
  website_id: string;
  visitor_id: string;
  user_id: string;
  name: string | null;
  image: string | null;
  metadata: Record<string, string> | null;
  identified_at: string;
}

/** Creates the visitor's profile or replaces it whole: a profile is what the latest identify said. */
export async function upsertProfile(db: Kysely<Database>, row: ProfileRow): Promise<void> {
  const values = { ...row, metadata: row.metadata ? JSON.stringify(row.metadata) : null, email: profileEmailOf(row.user_id, row.metadata) };
  const { website_id, visitor_id, ...changes } = values; // eslint-disable-line @typescript-eslint/no-unused-vars
  await db
    .insertInto('visitor_profiles')
    .values(values)
    .onConflict((oc) => oc.columns(['website_id', 'visitor_id']).doUpdateSet(changes))
    .execute();
}

/**
 * The profile POST /api/v1/identify stored for a visitor of the website, or null. The same shape
 * from both engines (identified_at as ISO UTC with milliseconds, metadata parsed).
 */
export async function findVisitorProfile(db: Kysely<Database>, websiteId: string, visitorId: string): Promise<VisitorProfile | null> {
  const row = await db
    .selectFrom('visitor_profiles')
    .select(['user_id', 'name', 'image', 'metadata', 'identified_at'])
    .where('website_id', '=', websiteId)
    .where('visitor_id', '=', visitorId)
    .executeTakeFirst();
  if (!row) return null;
  return {
    userId: row.user_id,
    name: row.name,
    image: row.image,
    metadata: row.metadata === null ? null : (JSON.parse(row.metadata) as Record<string, string>),
    identifiedAt: new Date(row.identified_at).toISOString(),
  };
}
