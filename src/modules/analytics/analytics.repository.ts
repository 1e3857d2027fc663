import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';

/** What the time series needs of the website itself; the counts come from the event store. */
export async function findWebsiteSettings(db: Kysely<Database>, websiteId: string) {
  return db
    .selectFrom('websites')
    .select(['timezone', 'currency', 'include_renewal_revenue'])
    .where('id', '=', websiteId)
    .executeTakeFirst();
}
