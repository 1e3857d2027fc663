import { sql } from 'kysely';
import type { ClickHouse } from '../../db/clickhouse/clickhouse.ts';
import { updateAndWait } from '../../db/clickhouse/mutations.ts';
import { SESSION_ATTRIBUTES, attributeColumn } from '../../db/clickhouse/session-attributes.ts';
import type { SessionRow } from './clickhouse-sessions.ts';

// The session attributes on events (docs/decisions.md, "Session attributes copied onto events"):
// the relay writes them on each event it ships (clickhouse-session-state.ts folds the batch's
// sessions first). An events table created before them lacks the columns; the upgrade copies it
// into a table that has them, filled from the sessions table (clickhouse-sampling-upgrade.ts),
// and the reads test the columns once `events` has them (until then they look the sessions up).

/** Which of these tables have the session attribute columns. */
export async function tablesWithAttributes(ch: ClickHouse, tables: string[]): Promise<Set<string>> {
  const rows = await ch.rows<{ table: string }>(sql`select table from system.columns
    where database = currentDatabase() and table in (${sql.join(tables)}) and name = ${attributeColumn('entry_path')}`);
  return new Set(rows.map((row) => row.table));
}

/** Whether the events carry their sessions' attributes (every one of them: the upgrade's copy is done). */
export async function eventsHaveSessionAttributes(ch: ClickHouse): Promise<boolean> {
  return (await tablesWithAttributes(ch, ['events'])).has('events');
}

/**
 * The stored events of sessions whose entry or source a batch moved (an event earlier than those
 * shipped before) get the new attributes, in `events` and in the upgrade's copy when it has the
 * columns. The batch's own events already carry them; running it again after a crash sets the
 * same values. A mutation per session: rare (a past instant, or a relay stalled mid-session).
 */
export async function updateChangedAttributes(ch: ClickHouse, changed: { after: SessionRow }[]): Promise<void> {
  if (changed.length === 0) return;
  const tables = await tablesWithAttributes(ch, ['events', 'events_sampled']);
  for (const { after } of changed) {
    const assignments = sql.join(SESSION_ATTRIBUTES.map((name) => sql`${sql.ref(attributeColumn(name))} = ${after[name]}`));
    const from = after.started_ms;
    const to = after.ended_ms;
    const condition = sql`website_id = ${after.website_id} and session_id = ${after.session_id}
      and occurred_at >= toDateTime(${Math.floor(from / 1000)}) and occurred_at <= toDateTime(${Math.ceil(to / 1000)})
      and occurred_ms >= ${from} and occurred_ms <= ${to}`;
    for (const table of tables) await updateAndWait(ch, table, assignments, condition);
  }
}
