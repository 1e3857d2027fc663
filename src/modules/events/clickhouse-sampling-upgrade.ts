import { type RawBuilder, sql } from 'kysely';
import type { ClickHouse } from '../../db/clickhouse/clickhouse.ts';
import { EVENT_COLUMNS, EVENT_TABLE_COLUMNS, eventsTableDdl } from '../../db/clickhouse/clickhouse-schema.ts';
import { deleteAndWait } from '../../db/clickhouse/mutations.ts';
import { SESSION_ATTRIBUTES } from '../../db/clickhouse/session-attributes.ts';
import { tablesWithAttributes } from './clickhouse-session-attributes.ts';
import { SESSION_REACH_MS } from '../stats/clickhouse/scope-ch.ts';
import { latestOf } from '../stats/clickhouse/stored-sessions-ch.ts';
import { EVENT_ROLLUPS_SCHEMA, SPANS, type DaysByWebsite, daysOf } from './clickhouse-event-rollups.ts';
import { sessionDaysOf } from './clickhouse-session-rollups.ts';
import { SESSION_ROW_COLUMNS, sessionsTableDdl } from './clickhouse-sessions.ts';

// The upgrade of an installation whose `events` and `sessions` tables were created without the
// sampling key (docs/decisions.md, "Sampled reads on ClickHouse"). ClickHouse 18.16 cannot change
// a table's sorting or sampling key, so each table is copied into `<table>_sampled` (the new
// declaration), a UTC day per relay turn, with how far it got recorded in sightline_state; once
// the copy reaches the open days, those are copied in the same turn as the switch: RENAME of the
// old table to `<table>_unsampled` and of the copy to `<table>`, then the old one is dropped.
// Everything here runs in the relay's turn (after every accepted event is shipped, nothing
// inserted meanwhile), as the sessions table's fill does (clickhouse-session-fill.ts), and only
// once that fill is done. Meanwhile the reads use the old tables, unsampled: correct, slower.
//
// - Events shipped during the copy whose rows fall on a copied day (an event with a past instant,
//   or a session row it changes) have those days of their website copied again (`recopyTouchedDays`).
// - Deletes reach the copy too (`deleteWithCopy`).
// - An `events` table without the session attribute columns (clickhouse-session-attributes.ts),
//   sampled or not, is copied the same way: the copy has them, each event joined to its session's
//   live row, and `events` having them after the switch is what tells reads and the relay.
// - A crash mid-copy: the rows of the day being copied are deleted from the copy at the next
//   step, which copies the day again. A crash between the two renames leaves no `<table>`: the
//   next start renames the copy before it creates anything (`finishSampledSwitch`).

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** The end of the last copy: within DateTime's reach. */
const FAR_FUTURE_MS = Date.UTC(2100, 0, 1);

interface UpgradedTable {
  name: 'events' | 'sessions';
  ddl: (name: string) => RawBuilder<unknown>;
  /** Its columns, copied by name. */
  columns: readonly string[];
  /** The copy's rows of [from, to) that pass `where` (default: the table's own, column for column). */
  select?: (from: number, to: number, where: RawBuilder<unknown>) => RawBuilder<unknown>;
  /** The DateTime column that partitions the table: a row's day. */
  at: string;
  /** The UTC days (per website) whose rows a batch of events may have written or changed. */
  touched: (events: { website_id: unknown; occurred_ms: unknown }[]) => DaysByWebsite;
}

/**
 * In this order: the events first, then the sessions. A function, not a constant: the schema
 * module imports this one (`finishSampledSwitch`), so its columns are not there yet while this loads.
 */
const tables = (): UpgradedTable[] => [
  { name: 'events', ddl: eventsTableDdl, columns: EVENT_TABLE_COLUMNS.map(([name]) => name), at: 'occurred_at', touched: daysOf, select: eventsWithAttributes },
  { name: 'sessions', ddl: sessionsTableDdl, columns: SESSION_ROW_COLUMNS.map(([name]) => name), at: 'started_at', touched: sessionDaysOf },
];

const copyOf = (table: string) => `${table}_sampled`;
const oldOf = (table: string) => `${table}_unsampled`;
const progressName = (table: string) => `${table} sampled copy until`;

/** Each of these tables' sampling key ('' when it has none), for those that exist. */
async function samplingKeys(ch: ClickHouse, names: string[]): Promise<Map<string, string>> {
  const rows = await ch.rows<{ name: string; sampling_key: string }>(
    sql`select name, sampling_key from system.tables where database = currentDatabase() and name in (${sql.join(names)})`,
  );
  return new Map(rows.map((row) => [row.name, row.sampling_key]));
}

/**
 * The tables still to copy, in order: without their sampling key, or (the events) without the
 * session attribute columns.
 */
async function tablesToCopy(ch: ClickHouse): Promise<UpgradedTable[]> {
  const names = tables().map((table) => table.name);
  const keys = await samplingKeys(ch, names);
  const withAttributes = await tablesWithAttributes(ch, ['events']);
  return tables().filter((t) => (keys.get(t.name) ?? '') === '' || (t.name === 'events' && !withAttributes.has('events')));
}

/** Whether no table is left to copy (the relay's upgrade is done). */
export async function tablesUpgraded(ch: ClickHouse): Promise<boolean> {
  return (await tablesToCopy(ch)).length === 0;
}

/** Whether both tables are declared with the sampling key (reads may sample). */
export async function sampledTablesReady(ch: ClickHouse): Promise<boolean> {
  const keys = await samplingKeys(ch, tables().map((table) => table.name));
  return tables().every((table) => (keys.get(table.name) ?? '') !== '');
}

/**
 * At every start, before the tables are created: a switch cut between its renames leaves the
 * copy without its table; it becomes the table. An old table left by a switch cut before its
 * drop is dropped.
 */
export async function finishSampledSwitch(ch: ClickHouse): Promise<void> {
  const keys = await samplingKeys(ch, tables().flatMap((table) => [table.name, copyOf(table.name), oldOf(table.name)]));
  for (const { name } of tables()) {
    if (!keys.has(name) && keys.has(copyOf(name)) && keys.has(oldOf(name))) {
      await ch.command(sql`rename table ${sql.table(copyOf(name))} to ${sql.table(name)}`);
      keys.set(name, keys.get(copyOf(name))!);
    }
    if ((keys.get(name) ?? '') !== '' && keys.has(oldOf(name))) await ch.command(sql`drop table if exists ${sql.table(oldOf(name))}`);
  }
}

async function copiedUntil(ch: ClickHouse, table: string): Promise<number | null> {
  const [row] = await ch.rows<{ until: string; n: string }>(
    sql`select toString(max(toUInt64(value))) as until, count() as n from sightline_state where name = ${progressName(table)}`,
  );
  return Number(row?.n ?? 0) === 0 ? null : Number(row!.until);
}

const recordProgress = (ch: ClickHouse, table: string, until: number) =>
  ch.command(sql`insert into sightline_state (name, value) values (${progressName(table)}, ${String(until)})`);

function span(table: UpgradedTable, from: number, to: number): RawBuilder<unknown> {
  const at = sql.ref(table.at);
  return sql`${at} >= toDateTime(${Math.floor(from / 1000)}) and ${at} < toDateTime(${Math.floor(to / 1000)})`;
}

/**
 * The events of [from, to) with their sessions' attributes (the `s_` columns, in
 * EVENT_TABLE_COLUMNS's order), from the live row of their session in the sessions table (filled
 * before this upgrade starts): the sessions that started within a session's reach before the span
 * or in it. An event without a session, or whose session is not there, gets none (NULL).
 */
function eventsWithAttributes(from: number, to: number, where: RawBuilder<unknown>): RawBuilder<unknown> {
  const own = sql.join(EVENT_COLUMNS.map(([name]) => sql.ref(name)));
  const joined = SESSION_ATTRIBUTES.map((name) => sql.ref(`j_${name}`));
  const latest = SESSION_ATTRIBUTES.map((name) => sql`${latestOf(name)} as ${sql.ref(`j_${name}`)}`);
  const started = sql`started_at >= toDateTime(${Math.max(0, Math.floor((from - SESSION_REACH_MS) / 1000))}) and started_at < toDateTime(${Math.ceil(to / 1000)})`;
  return sql`select ${own}, ${sql.join(joined)}
    from (select ${own}, ifNull(session_id, '') as join_session from events where ${span(eventsTable(), from, to)} and ${where})
    any left join (select website_id, session_id as join_session, ${sql.join(latest)} from sessions where ${started}
      group by website_id, session_id having sum(sign) > 0) using (website_id, join_session)`;
}

const eventsTable = () => tables()[0]!;

/** Copies the table's rows of [from, to) (and that pass `where`) into its copy. */
async function copySpan(ch: ClickHouse, table: UpgradedTable, from: number, to: number, where: RawBuilder<unknown> = sql`1 = 1`): Promise<void> {
  const columns = sql.join(table.columns.map((name) => sql.ref(name)));
  const rows = table.select ? table.select(from, to, where) : sql`select ${columns} from ${sql.table(table.name)} where ${span(table, from, to)} and ${where}`;
  await ch.command(sql`insert into ${sql.table(copyOf(table.name))} (${columns}) ${rows}`);
}

/** Deletes the copy's rows of [from, ...) (a copy cut by a crash), when it holds any. */
async function deleteCopiedFrom(ch: ClickHouse, table: UpgradedTable, from: number): Promise<void> {
  const condition = span(table, from, FAR_FUTURE_MS);
  const [row] = await ch.rows<{ n: string }>(sql`select count() as n from ${sql.table(copyOf(table.name))} where ${condition}`);
  if (Number(row?.n ?? 0) > 0) await deleteAndWait(ch, copyOf(table.name), condition);
}

/** The copy made the table, in one turn with nothing inserted: views off, two renames, views on, the old table dropped. */
async function switchTo(ch: ClickHouse, table: UpgradedTable): Promise<void> {
  // A view follows its source's name on 18.16 and its renamed table on current releases: made again.
  const views = table.name === 'events' ? Object.values(SPANS).map((s) => `${s.table}_view`) : [];
  for (const view of views) await ch.command(sql`drop table if exists ${sql.table(view)}`);
  await ch.command(sql`rename table ${sql.table(table.name)} to ${sql.table(oldOf(table.name))}, ${sql.table(copyOf(table.name))} to ${sql.table(table.name)}`);
  if (views.length > 0) for (const statement of EVENT_ROLLUPS_SCHEMA) await ch.command(statement);
  await ch.command(sql`drop table if exists ${sql.table(oldOf(table.name))}`);
  await deleteAndWait(ch, 'sightline_state', sql`name = ${progressName(table.name)}`);
}

/**
 * One step of the upgrade: the next closed day of the first table still unsampled, or its open
 * days and the switch. Returns whether both tables are sampled. The caller ships every accepted
 * event first and lets nothing be inserted meanwhile.
 */
export async function sampledTablesStep(ch: ClickHouse, now: number): Promise<boolean> {
  const toCopy = await tablesToCopy(ch);
  const table = toCopy[0];
  if (!table) return true;
  let until = await copiedUntil(ch, table.name);
  // A copy begun by the release before the session attributes lacks their columns: begun again.
  if (until !== null && table.name === 'events' && (await samplingKeys(ch, [copyOf('events')])).has(copyOf('events'))
    && !(await tablesWithAttributes(ch, [copyOf('events')])).has(copyOf('events'))) {
    await deleteAndWait(ch, 'sightline_state', sql`name = ${progressName(table.name)}`);
    until = null;
  }
  if (until === null) {
    // A copy without a record of its progress holds nothing that counts.
    await ch.command(sql`drop table if exists ${sql.table(copyOf(table.name))}`);
    await ch.command(table.ddl(copyOf(table.name)));
    const [first] = await ch.rows<{ first: string; n: string }>(
      sql`select toString(toUInt64(min(${sql.ref(table.at)}))) as first, count() as n from ${sql.table(table.name)}`,
    );
    until = Number(first?.n ?? 0) === 0 ? Math.floor(now / DAY_MS) * DAY_MS : Math.floor((Number(first!.first) * 1000) / DAY_MS) * DAY_MS;
    await recordProgress(ch, table.name, until);
  } else {
    await ch.command(table.ddl(copyOf(table.name)));
    await deleteCopiedFrom(ch, table, until);
  }
  if (until + DAY_MS + SESSION_REACH_MS + HOUR_MS <= now) {
    await copySpan(ch, table, until, until + DAY_MS);
    await recordProgress(ch, table.name, until + DAY_MS);
    return false;
  }
  await copySpan(ch, table, until, FAR_FUTURE_MS);
  await switchTo(ch, table);
  return toCopy.length === 1;
}

/**
 * During the copy: copies again the copied days whose rows these shipped events may have written
 * or changed (an event with a past instant). Rows of days not copied yet need nothing.
 */
export async function recopyTouchedDays(ch: ClickHouse, events: { website_id: unknown; occurred_ms: unknown }[]): Promise<void> {
  const copies = await samplingKeys(ch, tables().map((table) => copyOf(table.name)));
  for (const table of tables().filter((t) => copies.has(copyOf(t.name)))) {
    const until = await copiedUntil(ch, table.name);
    if (until === null) continue;
    for (const [websiteId, days] of table.touched(events)) {
      for (const day of [...days].map((seconds) => seconds * 1000).filter((day) => day < until)) {
        const website = sql`website_id = ${websiteId}`;
        await deleteAndWait(ch, copyOf(table.name), sql`${website} and ${span(table, day, day + DAY_MS)}`);
        await copySpan(ch, table, day, day + DAY_MS, website);
      }
    }
  }
}

/** A delete from `events` or `sessions`, and from its copy while an upgrade fills one. */
export async function deleteWithCopy(ch: ClickHouse, table: 'events' | 'sessions', condition: RawBuilder<unknown>): Promise<void> {
  await deleteAndWait(ch, table, condition);
  if ((await samplingKeys(ch, [copyOf(table)])).has(copyOf(table))) await deleteAndWait(ch, copyOf(table), condition);
}
