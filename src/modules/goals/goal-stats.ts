import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { RecordedEvent } from '../events/event.types.ts';

/** Placeholder until the tracked-goals work lands: keeps goal_stats and goal_visitors current. */
export async function updateGoalStats(_trx: Kysely<Database>, _events: RecordedEvent[]): Promise<void> {}
