import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Engine } from '../../db/database.ts';
import { BREAKDOWN_SPECS } from '../stats/breakdown-specs.ts';
import type { Breakdown } from '../stats/event-store.ts';
import { SESSION_BREAKDOWNS, keyJson } from '../stats/sql/breakdown-keys-sql.ts';
import { ADD_TO_TOTALS, totalsFromVisitorRows } from './breakdown-rollup-tables.ts';

// Keeps the all-time session breakdowns (entry pages, exit pages, referrers, campaigns) in
// breakdown_visitors and breakdown_totals, as the event breakdowns are kept: per visitor and key,
// that visitor's sessions (the `events` column, which the raw read counts as `count(*)`) and
// their pageviews; per key, its visitors, sessions and pageviews. A session's exit page and
// pageviews change with nearly every event of it, so its rows follow the sessions table itself:
// triggers (migration 0014) move a session's counts from its old key to its new one on every
// insert, update and delete, in the writing transaction, whoever writes (ingestion's upsert,
// the rebuild, a website deletion). The trigger bodies are literal SQL, no bound value.

/** The columns whose change can move a session's rows: its visitor, pageviews and every key column. */
export const WATCHED_COLUMNS = [
  ...new Set(['visitor_id', 'pageviews', ...SESSION_BREAKDOWNS.flatMap((kind) => Object.values(BREAKDOWN_SPECS[kind].keys))]),
];

/** A trigger row's (`new`, `old`) terms for one breakdown. */
function rowTerms(engine: Engine, row: 'new' | 'old', kind: Breakdown) {
  const column = (name: string) => sql.raw(`${row}.${name}`);
  const key = keyJson(engine, kind, row);
  const website = column('website_id');
  const breakdown = sql.lit(kind);
  return {
    key,
    pageviews: column('pageviews'),
    website,
    breakdown,
    /** The session's row of breakdown_visitors (alias-free columns of breakdown_visitors). */
    visitorRow: sql`website_id = ${website} and visitor_id = ${column('visitor_id')} and breakdown = ${breakdown} and key = ${key}`,
    /** The same row, from a subquery (alias `v`). */
    visitorRowOfV: sql`v.website_id = ${website} and v.visitor_id = ${column('visitor_id')} and v.breakdown = ${breakdown} and v.key = ${key}`,
    totalsRow: sql`website_id = ${website} and breakdown = ${breakdown} and key = ${key}`,
    visitor: column('visitor_id'),
  };
}

type Terms = ReturnType<typeof rowTerms>;

/** A session joins its key: a new visitor of it when the visitor had no session under it. */
const add = (t: Terms): RawBuilder<unknown>[] => [
  sql`insert into breakdown_totals (website_id, breakdown, key, visitors, pageviews, events)
    values (${t.website}, ${t.breakdown}, ${t.key},
      case when exists (select 1 from breakdown_visitors v where ${t.visitorRowOfV}) then 0 else 1 end, ${t.pageviews}, 1)
    ${ADD_TO_TOTALS}`,
  sql`insert into breakdown_visitors (website_id, visitor_id, breakdown, key, pageviews, events)
    values (${t.website}, ${t.visitor}, ${t.breakdown}, ${t.key}, ${t.pageviews}, 1)
    on conflict (website_id, visitor_id, breakdown, key) do update set
      pageviews = breakdown_visitors.pageviews + excluded.pageviews, events = breakdown_visitors.events + excluded.events`,
];

/** A session leaves its key: the visitor leaves it with their last session under it. */
const subtract = (t: Terms): RawBuilder<unknown>[] => [
  sql`update breakdown_visitors set pageviews = pageviews - ${t.pageviews}, events = events - 1 where ${t.visitorRow}`,
  sql`update breakdown_totals set pageviews = pageviews - ${t.pageviews}, events = events - 1,
      visitors = visitors - (select count(*) from breakdown_visitors v where ${t.visitorRowOfV} and v.events <= 0)
    where ${t.totalsRow}`,
  sql`delete from breakdown_visitors where ${t.visitorRow} and events <= 0`,
  sql`delete from breakdown_totals where ${t.totalsRow} and events <= 0`,
];

/** A session that kept its visitor and key: its pageviews by the difference. */
const change = (o: Terms, n: Terms): RawBuilder<unknown>[] => [
  sql`update breakdown_visitors set pageviews = pageviews + ${n.pageviews} - ${o.pageviews} where ${n.visitorRow}`,
  sql`update breakdown_totals set pageviews = pageviews + ${n.pageviews} - ${o.pageviews} where ${n.totalsRow}`,
];

const statements = (list: RawBuilder<unknown>[]) => sql.join(list.map((statement) => sql`${statement};`), sql` `);

/** The session kept its visitor and key (JSON text, so null-safe). */
const sameRow = (o: Terms, n: Terms) => sql`old.visitor_id = new.visitor_id and ${o.key} = ${n.key}`;

const triggerName = (kind: Breakdown, what: string) => sql.id(`session_breakdown_${kind.replaceAll('-', '_')}_${what}`);
const WATCHED = sql.raw(WATCHED_COLUMNS.join(', '));

export async function createSessionBreakdownTriggers(db: Kysely<unknown>, engine: Engine): Promise<void> {
  const pairs = SESSION_BREAKDOWNS.map((kind) => ({ kind, o: rowTerms(engine, 'old', kind), n: rowTerms(engine, 'new', kind) }));
  if (engine === 'postgres') {
    const onUpdate = pairs.map(({ o, n }) => sql`
        if ${sameRow(o, n)} then
          if old.pageviews <> new.pageviews then ${statements(change(o, n))} end if;
        else
          ${statements([...subtract(o), ...add(n)])}
        end if;`);
    await sql`create function session_breakdowns_follow() returns trigger language plpgsql as $$
      begin
        if tg_op = 'INSERT' then
          ${statements(pairs.flatMap(({ n }) => add(n)))}
        elsif tg_op = 'DELETE' then
          ${statements(pairs.flatMap(({ o }) => subtract(o)))}
        else
          ${sql.join(onUpdate, sql` `)}
        end if;
        return null;
      end $$`.execute(db);
    await sql`create trigger session_breakdowns_follow after insert or delete or update of ${WATCHED} on sessions
      for each row execute function session_breakdowns_follow()`.execute(db);
    return;
  }
  await sql`create trigger session_breakdowns_insert after insert on sessions
    begin ${statements(pairs.flatMap(({ n }) => add(n)))} end`.execute(db);
  await sql`create trigger session_breakdowns_delete after delete on sessions
    begin ${statements(pairs.flatMap(({ o }) => subtract(o)))} end`.execute(db);
  for (const { kind, o, n } of pairs) {
    await sql`create trigger ${triggerName(kind, 'change')} after update of ${WATCHED} on sessions
      when ${sameRow(o, n)} and old.pageviews <> new.pageviews
      begin ${statements(change(o, n))} end`.execute(db);
    await sql`create trigger ${triggerName(kind, 'move')} after update of ${WATCHED} on sessions
      when not (${sameRow(o, n)})
      begin ${statements([...subtract(o), ...add(n)])} end`.execute(db);
  }
}

export async function dropSessionBreakdownTriggers(db: Kysely<unknown>, engine: Engine): Promise<void> {
  if (engine === 'postgres') {
    await sql`drop trigger session_breakdowns_follow on sessions`.execute(db);
    await sql`drop function session_breakdowns_follow()`.execute(db);
    return;
  }
  await sql`drop trigger session_breakdowns_insert`.execute(db);
  await sql`drop trigger session_breakdowns_delete`.execute(db);
  for (const kind of SESSION_BREAKDOWNS) {
    await sql`drop trigger ${triggerName(kind, 'change')}`.execute(db);
    await sql`drop trigger ${triggerName(kind, 'move')}`.execute(db);
  }
}

/**
 * Derives the session breakdowns' rows of both tables from the stored sessions of one website, or
 * of all of them, into tables holding none of those rows: the rebuild, and migration 0014's fill.
 */
export async function deriveSessionBreakdownRollups<DB>(db: Kysely<DB>, engine: Engine, websiteId: string | null): Promise<void> {
  const website = websiteId === null ? sql`true` : sql`s.website_id = ${websiteId}`;
  const branches = SESSION_BREAKDOWNS.map(
    (kind) => sql`select s.website_id, s.visitor_id, ${sql.lit(kind)} as breakdown, ${keyJson(engine, kind, 's')} as key, s.pageviews
      from sessions s where ${website}`,
  );
  await sql`insert into breakdown_visitors (website_id, visitor_id, breakdown, key, pageviews, events)
    select website_id, visitor_id, breakdown, key, sum(pageviews), count(*)
    from (${sql.join(branches, sql` union all `)}) k
    group by website_id, visitor_id, breakdown, key`.execute(db);
  await totalsFromVisitorRows(db, websiteId, SESSION_BREAKDOWNS);
}
