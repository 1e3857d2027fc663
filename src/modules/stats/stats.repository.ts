import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';

/** What the reads need of the website itself. */
export async function findWebsiteForStats(db: Kysely<Database>, websiteId: string) {
  return db
    .selectFrom('websites')
    .select(['id', 'domain', 'name', 'timezone', 'currency', 'kpi', 'kpi_color_scheme', 'include_renewal_revenue'])
    .where('id', '=', websiteId)
    .executeTakeFirst();
}

export type StatsWebsite = NonNullable<Awaited<ReturnType<typeof findWebsiteForStats>>>;

/** What POST /identify said about a visitor, or null. */
export async function findVisitorProfile(db: Kysely<Database>, websiteId: string, visitorId: string) {
  const row = await db
    .selectFrom('visitor_profiles')
    .selectAll()
    .where('website_id', '=', websiteId)
    .where('visitor_id', '=', visitorId)
    .executeTakeFirst();
  if (!row) return null;
  return {
    userId: row.user_id,
    name: row.name,
    image: row.image,
    metadata: row.metadata ? (JSON.parse(row.metadata) as Record<string, string>) : null,
    identifiedAt: new Date(row.identified_at).toISOString(),
  };
}
