import type { Kysely } from 'kysely';
import { canonicalTimeZone } from '../../lib/time-zones.ts';
import type { Database } from '../schema.ts';

/**
 * Websites stored before time zones were answered in their current IANA spelling may hold an
 * old one (`Asia/Calcutta`, `Europe/Kiev`). Rewrites each to its canonical name so every reader
 * (website, list, time series) answers it alike. Same zone, so no rollup changes; `updated_at`
 * is left alone because the owner changed nothing.
 */
export async function canonicaliseStoredTimeZones(db: Kysely<Database>): Promise<number> {
  const zones = await db.selectFrom('websites').select('timezone').distinct().execute();
  let renamed = 0;
  for (const { timezone } of zones) {
    const canonical = canonicalTimeZone(timezone);
    if (canonical === null || canonical === timezone) continue;
    const result = await db.updateTable('websites').set({ timezone: canonical }).where('timezone', '=', timezone).executeTakeFirst();
    renamed += Number(result.numUpdatedRows);
  }
  return renamed;
}

export function canonicalTimeZones() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await canonicaliseStoredTimeZones(db as Kysely<Database>);
    },
    // A spelling change only: the old names still resolve to the same zones.
    async down(): Promise<void> {},
  };
}
