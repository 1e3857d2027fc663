import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { daysMoving, derivedDataBuilding } from '../analytics/visitor-zones.ts';

/**
 * What the time series needs of the website itself, whether its day rollups are moving (or being
 * built) and whether a build of its derived tables runs; the counts come from the event store.
 */
export async function findWebsiteSettings(db: Kysely<Database>, websiteId: string) {
  return db
    .selectFrom('websites')
    .select(['timezone', 'currency', 'include_renewal_revenue'])
    .select((eb) => [daysMoving(eb).as('moving'), derivedDataBuilding(eb).as('building')])
    .where('id', '=', websiteId)
    .executeTakeFirst()
    .then((row) => (row ? { ...row, relocating: Boolean(row.moving) } : undefined));
}
