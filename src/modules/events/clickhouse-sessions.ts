import { type RawBuilder, sql } from 'kysely';
import type { ClickHouseEventRow } from '../../db/clickhouse/clickhouse-schema.ts';
import { SAMPLING_KEY } from '../../db/clickhouse/sampling-key.ts';
import { SESSION_ATTRIBUTES, SESSION_SOURCE_COLUMNS, attributeColumn } from '../../db/clickhouse/session-attributes.ts';

// The sessions table on ClickHouse: one row per state of a session, written at ingestion by the
// relay as collapsing pairs (the previous state again with sign -1, the new one with sign +1), so
// reads take sessions from here instead of grouping the events (docs/decisions.md, "Sessions
// written at ingestion on ClickHouse"). `events`, the session's event count, is the version: it
// grows with every event, so a cancel row (a copy of the row it cancels) is the only other row
// of a session with that version. `batch` names the relay batch (or the upgrade's fill) that
// wrote the row, which is how a batch shipped again finds what it already wrote.
//
// The columns and their meaning are those of `sessionsTable` (stats/clickhouse/scope-ch.ts),
// which grouped them from the events, plus the instants of the entry and exit pageviews (0 when
// the session has none) so that a later event can be folded into a state.

type SourceColumn = (typeof SESSION_SOURCE_COLUMNS)[number];

export type SessionRow = {
  website_id: string;
  session_id: string;
  sign: 1 | -1;
  events: number;
  batch: string;
  /** Epoch seconds of the start, for the partitions and the sorting key. */
  started_at: number;
  started_ms: number;
  ended_ms: number;
  visitor_id: string;
  pageviews: number;
  goals: number;
  entry_ms: number;
  entry_hostname: string | null;
  entry_path: string | null;
  exit_ms: number;
  exit_path: string | null;
} & Record<SourceColumn, string | null>;

/** Every column, in order, with its ClickHouse type. */
export const SESSION_ROW_COLUMNS = [
  ['website_id', 'String'],
  ['session_id', 'String'],
  ['sign', 'Int8'],
  ['events', 'UInt32'],
  ['batch', 'String'],
  ['started_at', 'DateTime'],
  ['started_ms', 'UInt64'],
  ['ended_ms', 'UInt64'],
  ['visitor_id', 'String'],
  ['pageviews', 'UInt32'],
  ['goals', 'UInt32'],
  ['entry_ms', 'UInt64'],
  ['entry_hostname', 'Nullable(String)'],
  ['entry_path', 'Nullable(String)'],
  ['exit_ms', 'UInt64'],
  ['exit_path', 'Nullable(String)'],
  ...SESSION_SOURCE_COLUMNS.map((name) => [name, 'Nullable(String)'] as const),
] as const satisfies readonly (readonly [keyof SessionRow, string])[];

/**
 * The sessions table named `name` (`sessions`, or the copy an upgrade fills), sorted by the
 * visitor's hash after the day, sampled by it as the events are. A cancel row copies the row it
 * cancels, so both share the sorting key and collapse, whatever the session's next state holds.
 */
export function sessionsTableDdl(name: string): RawBuilder<unknown> {
  return sql`CREATE TABLE IF NOT EXISTS ${sql.table(name)} (
  ${sql.raw(SESSION_ROW_COLUMNS.map(([column, type]) => `${column} ${type}`).join(',\n  '))}
) ENGINE = VersionedCollapsingMergeTree(sign, events)
PARTITION BY toYYYYMM(started_at)
ORDER BY (website_id, toDate(started_at), ${sql.raw(SAMPLING_KEY)}, session_id)
SAMPLE BY ${sql.raw(SAMPLING_KEY)}`;
}

const text = (value: unknown): string | null => (value === null || value === undefined ? null : String(value));

/** A session's first state, from its first event. */
function openSession(event: ClickHouseEventRow): Omit<SessionRow, 'sign' | 'batch'> {
  const ms = Number(event.occurred_ms);
  return {
    website_id: String(event.website_id),
    session_id: String(event.session_id),
    events: 0,
    started_at: Math.floor(ms / 1000),
    started_ms: ms,
    ended_ms: ms,
    visitor_id: String(event.visitor_id),
    pageviews: 0,
    goals: 0,
    entry_ms: 0,
    entry_hostname: null,
    entry_path: null,
    exit_ms: 0,
    exit_path: null,
    ...(Object.fromEntries(SESSION_SOURCE_COLUMNS.map((name) => [name, text(event[name])])) as Record<SourceColumn, string | null>),
  };
}

/**
 * The state after `event`, whatever the order events arrive in: the start, visitor and source
 * are the earliest event's, the entry the earliest pageview's, the exit the latest pageview's (on
 * equal instants, the first to arrive keeps the start and entry, the last the exit).
 */
function foldEvent(state: Omit<SessionRow, 'sign' | 'batch'>, event: ClickHouseEventRow): Omit<SessionRow, 'sign' | 'batch'> {
  const ms = Number(event.occurred_ms);
  const next = { ...state, events: state.events + 1 };
  if (ms < state.started_ms) {
    const earliest = openSession(event);
    Object.assign(next, { started_at: earliest.started_at, started_ms: ms, visitor_id: earliest.visitor_id });
    for (const name of SESSION_SOURCE_COLUMNS) next[name] = earliest[name];
  }
  next.ended_ms = Math.max(state.ended_ms, ms);
  if (event.type === 'custom' && event.name !== null && event.name !== undefined) next.goals += 1;
  if (event.type === 'pageview') {
    if (next.pageviews === 0 || ms < next.entry_ms) Object.assign(next, { entry_ms: ms, entry_hostname: text(event.hostname), entry_path: text(event.path) });
    if (next.pageviews === 0 || ms >= next.exit_ms) Object.assign(next, { exit_ms: ms, exit_path: text(event.path) });
    next.pageviews += 1;
  }
  return next;
}

/** The session's state once `events` (in arrival order) are added to `previous` (null: a new session). */
export function foldSession(previous: SessionRow | null, events: ClickHouseEventRow[], batch: string): SessionRow {
  let state: Omit<SessionRow, 'sign' | 'batch'> | null = previous ? { ...previous } : null;
  for (const event of events) state = foldEvent(state ?? openSession(event), event);
  if (!state) throw new Error('a session state needs an event');
  return { ...state, sign: 1, batch };
}

/** The rows a batch writes for one session: the previous state cancelled (if any) and the new one. */
export function collapsingPair(previous: SessionRow | null, next: SessionRow): SessionRow[] {
  return previous ? [{ ...previous, sign: -1, batch: next.batch }, next] : [next];
}

/** A row as ClickHouse returns it (64-bit integers as text), typed again. */
export function sessionRowOf(raw: Record<string, unknown>): SessionRow {
  const row = { ...raw } as Record<string, unknown>;
  for (const [name, type] of SESSION_ROW_COLUMNS) {
    if (type.startsWith('Int') || type.startsWith('UInt')) row[name] = Number(row[name]);
  }
  // DateTime comes back as text in the server's zone: the start's seconds are those of started_ms.
  row.started_at = Math.floor(Number(row.started_ms) / 1000);
  return row as SessionRow;
}

/** The session attributes its events carry (`s_entry_path` ...), as of this state. */
export function attributesOf(state: SessionRow): Record<string, string | null> {
  return Object.fromEntries(SESSION_ATTRIBUTES.map((name) => [attributeColumn(name), state[name]]));
}

/** Whether events carrying `before`'s attributes must be given `after`'s (an earlier event moved the entry or the source). */
export function attributesChanged(before: SessionRow, after: SessionRow): boolean {
  return SESSION_ATTRIBUTES.some((name) => before[name] !== after[name]);
}
