import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { daysMoving, derivedDataBuilding } from '../analytics/visitor-zones.ts';

/** What the reads need of the website itself. */
export async function findWebsiteForStats(db: Kysely<Database>, websiteId: string) {
  return db
    .selectFrom('websites')
    .select(['id', 'domain', 'name', 'timezone', 'currency', 'kpi', 'kpi_color_scheme', 'include_renewal_revenue'])
    .select((eb) => [daysMoving(eb).as('moving'), derivedDataBuilding(eb).as('building')])
    .where('id', '=', websiteId)
    .executeTakeFirst()
    .then((row) => (row ? { ...row, relocating: Boolean(row.moving), building: Boolean(row.building) } : undefined));
}

export type StatsWebsite = NonNullable<Awaited<ReturnType<typeof findWebsiteForStats>>>;

