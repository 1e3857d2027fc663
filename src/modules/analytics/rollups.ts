import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { RecordedEvent } from '../events/event.types.ts';

/** Placeholder until the time-series work lands: keeps visitor_days and daily_totals current. */
export async function updateDailyRollups(_trx: Kysely<Database>, _events: RecordedEvent[]): Promise<void> {}
