import type { Kysely } from 'kysely';
import { prepareListQuery } from '../../db/prepared.ts';
import type { Database } from '../../db/schema.ts';
import { newId } from '../../lib/ids.ts';
import { fireAlertsForGoals } from '../alerts/alert-firing.ts';
import { updateDailyRollups } from '../analytics/rollups.ts';
import { updateGoalStats } from '../goals/goal-stats.ts';
import type { EventEffectsConfig, NewEvent, RecordedEvent } from './event.types.ts';

// The one place events are written. Everything that must agree with the raw events (rollups,
// goal statistics, alert history and its queued mail) is written in the same transaction, so a
// crash keeps either all of it or none of it.

/** Rows per INSERT: 16 bound values each, well under both engines' bound-parameter limits. */
const ROWS_PER_INSERT = 500;

type EventRow = [
  id: string,
  websiteId: string,
  type: string,
  name: string | null,
  visitorId: string,
  sessionId: string | null,
  hostname: string | null,
  path: string | null,
  referrer: string | null,
  country: string | null,
  browser: string | null,
  os: string | null,
  device: string | null,
  metadata: string | null,
  source: string,
  occurredAt: string,
];

// Built once per batch size instead of on every batch (Kysely's multi-row insert costs more to
// build than SQLite takes to store the rows).
const insertEvents = prepareListQuery(16, (db, rows: EventRow[]) =>
  db.insertInto('events').values(
    rows.map((r) => ({
      id: r[0],
      website_id: r[1],
      type: r[2],
      name: r[3],
      visitor_id: r[4],
      session_id: r[5],
      hostname: r[6],
      path: r[7],
      referrer: r[8],
      country: r[9],
      browser: r[10],
      os: r[11],
      device: r[12],
      metadata: r[13],
      source: r[14],
      occurred_at: r[15],
    })),
  ),
);

export async function recordEvents(trx: Kysely<Database>, events: NewEvent[], effects: EventEffectsConfig): Promise<RecordedEvent[]> {
  if (events.length === 0) return [];
  const recorded = events.map((event) => ({ ...event, id: newId() }));
  const rows = recorded.map(
    (e): EventRow => [
      e.id,
      e.websiteId,
      e.type,
      e.name,
      e.visitorId,
      e.sessionId,
      e.hostname,
      e.path,
      e.referrer,
      e.country,
      e.browser,
      e.os,
      e.device,
      e.metadata ? JSON.stringify(e.metadata) : null,
      e.source,
      e.occurredAt,
    ],
  );
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) await insertEvents.all(trx, rows.slice(i, i + ROWS_PER_INSERT));
  await updateDailyRollups(trx, recorded);
  await updateGoalStats(trx, recorded);
  await fireAlertsForGoals(trx, recorded, effects);
  return recorded;
}
