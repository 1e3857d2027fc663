import type { Kysely } from 'kysely';
import { shareEventInserts } from '../../db/locks.ts';
import { prepareListQuery } from '../../db/prepared.ts';
import type { Database } from '../../db/schema.ts';
import { newId } from '../../lib/ids.ts';
import { fireAlertsForGoals } from '../alerts/alert-firing.ts';
import { eventsRecorded } from '../analytics/maintainer.ts';
import { updateGoalStats } from '../goals/goal-stats.ts';
import { COLUMNS, type EventRow, eventRow } from '../../db/event-columns.ts';
import type { EventEffectsConfig, NewEvent, RecordedEvent } from './event.types.ts';

// The one place events are written. What must hold the moment the event is acknowledged (the
// event itself, goal statistics, alert history and its queued mail) is written in the same
// transaction, so a crash keeps either all of it or none of it. The rollups the website API reads
// (days, sessions, visitor totals, breakdowns) are derived later, many events at a time, from
// the backlog row committed here with the event (../analytics/rollup-backlog.ts); reads settle
// the backlog first, so a client still reads its own events.

/** Rows per INSERT: 34 bound values each, well under both engines' bound-parameter limits. */
const ROWS_PER_INSERT = 250;

// Built once per batch size instead of on every batch (Kysely's multi-row insert costs more to
// build than SQLite takes to store the rows).
const insertEvents = prepareListQuery(COLUMNS.length, (db, rows: EventRow[]) =>
  db.insertInto('events').values(rows.map((row) => Object.fromEntries(COLUMNS.map(([column], i) => [column, row[i]])) as never)),
);

/** With ClickHouse: the event as its ClickHouse row (src/db/clickhouse/clickhouse-schema.ts). */
function clickHouseRow(e: RecordedEvent): string {
  const row: Record<string, string | number | null> = Object.fromEntries(COLUMNS.map(([column, value]) => [column, value(e)]));
  const ms = Date.parse(e.occurredAt);
  row.occurred_at = Math.floor(ms / 1000);
  row.occurred_ms = ms;
  return JSON.stringify(row);
}

const RELAY_ROWS_PER_INSERT = 500;

const queueForClickHouse = prepareListQuery(2, (db, rows: [websiteId: string, row: string][]) =>
  db.insertInto('event_relay').values(rows.map(([websiteId, row]) => ({ website_id: websiteId, row }))),
);

export async function recordEvents(trx: Kysely<Database>, events: NewEvent[], effects: EventEffectsConfig): Promise<RecordedEvent[]> {
  if (events.length === 0) return [];
  const recorded = events.map((event) => ({ ...event, id: newId() }));
  await storeEvents(trx, recorded, effects);
  await fireAlertsForGoals(trx, recorded, effects);
  return recorded;
}

/**
 * Stores events that already have their ids, with what must commit with them (the backlog of
 * their rollups, the goal statistics), but fires no alert: ingestion's path above, and an import
 * of past events (src/modules/imports/sightline-import-rows.ts).
 */
export async function storeEvents(trx: Kysely<Database>, recorded: RecordedEvent[], effects: Pick<EventEffectsConfig, 'eventsInClickHouse'>): Promise<void> {
  if (recorded.length === 0) return;
  if (effects.eventsInClickHouse) {
    // The raw events go to ClickHouse through the relay, which reads sessions and days from
    // them; only what the relational side serves itself (goal statistics, alerts) is kept here.
    const rows = recorded.map((e): [string, string] => [e.websiteId, clickHouseRow(e)]);
    for (let i = 0; i < rows.length; i += RELAY_ROWS_PER_INSERT) await queueForClickHouse.all(trx, rows.slice(i, i + RELAY_ROWS_PER_INSERT));
  } else {
    // A transaction that re-derives visitors from their raw events holds the websites' inserts (locks.ts).
    await shareEventInserts(trx, recorded.map((e) => e.websiteId));
    const rows = recorded.map(eventRow);
    for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) await insertEvents.all(trx, rows.slice(i, i + ROWS_PER_INSERT));
    await eventsRecorded(trx, recorded);
  }
  await updateGoalStats(trx, recorded);
}
