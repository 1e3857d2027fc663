import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { EventEffectsConfig, RecordedEvent } from '../events/event.types.ts';

/** Placeholder until alert delivery lands: writes history rows and queues mail for matching alerts. */
export async function fireAlertsForGoals(_trx: Kysely<Database>, _events: RecordedEvent[], _effects: EventEffectsConfig): Promise<void> {}
