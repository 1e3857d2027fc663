import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { newId } from '../../lib/ids.ts';
import { fireAlertsForGoals } from '../alerts/alert-firing.ts';
import { updateDailyRollups } from '../analytics/rollups.ts';
import { updateGoalStats } from '../goals/goal-stats.ts';
import type { EventEffectsConfig, NewEvent, RecordedEvent } from './event.types.ts';

// The one place events are written. Everything that must agree with the raw events (rollups,
// goal statistics, alert history and its queued mail) is written in the same transaction, so a
// crash keeps either all of it or none of it.

export async function recordEvents(trx: Kysely<Database>, events: NewEvent[], effects: EventEffectsConfig): Promise<RecordedEvent[]> {
  if (events.length === 0) return [];
  const recorded = events.map((event) => ({ ...event, id: newId() }));
  await trx
    .insertInto('events')
    .values(
      recorded.map((e) => ({
        id: e.id,
        website_id: e.websiteId,
        type: e.type,
        name: e.name,
        visitor_id: e.visitorId,
        session_id: e.sessionId,
        hostname: e.hostname,
        path: e.path,
        referrer: e.referrer,
        country: e.country,
        browser: e.browser,
        os: e.os,
        device: e.device,
        metadata: e.metadata ? JSON.stringify(e.metadata) : null,
        source: e.source,
        occurred_at: e.occurredAt,
      })),
    )
    .execute();
  await updateDailyRollups(trx, recorded);
  await updateGoalStats(trx, recorded);
  await fireAlertsForGoals(trx, recorded, effects);
  return recorded;
}
