import { type Kysely, type RawBuilder, sql } from 'kysely';
import { isPostgres } from '../../db/engine.ts';
import { prepareListQuery, sqlList } from '../../db/prepared.ts';
import type { Database } from '../../db/schema.ts';
import { chunks } from '../../lib/chunks.ts';
import type { RecordedEvent } from '../../db/event-records.ts';
import { VISITOR_ATTRIBUTES, attributeBit, attributesOf } from './visitor-attributes.ts';
import { BOUNCE, millisBetween } from './session-terms.ts';
import { leaveProfiles } from './breakdown-profiles.ts';

// Keeps visitor_totals: per website and visitor, all time, the first and last event, pageviews
// and events, so the unfiltered visitor list (newest activity first, with its full count) reads
// one row per visitor from an index instead of grouping every event. Each row also names the
// visitor's latest event with a page (what a list row shows of them) and keeps their visitor
// attributes with the bits of those that varied (visitor-attributes.ts), so a list
// filtered on them reads these rows too. Ingestion folds a batch's events into one row per
// visitor (one upsert per batch); a server-goal delete derives the touched visitors again from
// their remaining events; a rebuild derives a whole website (the migrations, the bench's bulk load).

type TotalsTuple = [
  websiteId: string,
  visitorId: string,
  firstAt: string,
  lastAt: string,
  pageviews: number,
  events: number,
  goals: number,
  latestAt: string | null,
  latestEventId: string | null,
  varied: number,
  ...attributes: (string | null)[],
];
const ATTRIBUTES_AT = 10;
const COLUMNS = ATTRIBUTES_AT + VISITOR_ATTRIBUTES.length;

const ROWS_PER_INSERT = 500;

const earlier = (column: string) => sql.raw<string>(`case when excluded.${column} < visitor_totals.${column} then excluded.${column} else visitor_totals.${column} end`);
const later = (column: string) => sql.raw<string>(`case when excluded.${column} > visitor_totals.${column} then excluded.${column} else visitor_totals.${column} end`);

/** The stored latest event with a page gives way to the batch's when that one is later (ties: the greater id, as the raw read orders). */
const LATEST_MOVES = `excluded.latest_at is not null and (visitor_totals.latest_at is null or excluded.latest_at > visitor_totals.latest_at
  or (excluded.latest_at = visitor_totals.latest_at and excluded.latest_event_id > visitor_totals.latest_event_id))`;

const differs = (db: Kysely<Database>, a: string) => `visitor_totals.${a} ${isPostgres(db) ? 'is distinct from' : 'is not'} excluded.${a}`;

/** The attributes on which the batch's events disagree with the stored ones, as bits. */
const newlyVaried = (db: Kysely<Database>) => VISITOR_ATTRIBUTES.map((a) => `case when ${differs(db, a)} then ${attributeBit(a)} else 0 end`).join(' | ');

/** A varied attribute's value is unknown (null), so that ingestion and a rebuild store the same row. */
const keptValue = (db: Kysely<Database>, a: (typeof VISITOR_ATTRIBUTES)[number]) =>
  sql.raw(`case when (visitor_totals.varied | excluded.varied) & ${attributeBit(a)} <> 0 or ${differs(db, a)} then null else visitor_totals.${a} end`);

const upsertTotals = prepareListQuery(COLUMNS, (db, rows: TotalsTuple[]) =>
  db
    .insertInto('visitor_totals')
    .values(
      rows.map((r) => ({
        website_id: r[0],
        visitor_id: r[1],
        first_at: r[2],
        last_at: r[3],
        pageviews: r[4],
        events: r[5],
        goals: r[6],
        latest_at: r[7],
        latest_event_id: r[8],
        varied: r[9],
        ...Object.fromEntries(VISITOR_ATTRIBUTES.map((a, i) => [a, r[ATTRIBUTES_AT + i]])),
      })),
    )
    .onConflict((oc) =>
      oc.columns(['website_id', 'visitor_id']).doUpdateSet({
        first_at: earlier('first_at'),
        last_at: later('last_at'),
        pageviews: sql`visitor_totals.pageviews + excluded.pageviews`,
        events: sql`visitor_totals.events + excluded.events`,
        goals: sql`visitor_totals.goals + excluded.goals`,
        latest_at: sql.raw(`case when ${LATEST_MOVES} then excluded.latest_at else visitor_totals.latest_at end`),
        latest_event_id: sql.raw(`case when ${LATEST_MOVES} then excluded.latest_event_id else visitor_totals.latest_event_id end`),
        varied: sql.raw(`visitor_totals.varied | excluded.varied | ${newlyVaried(db)}`),
        ...Object.fromEntries(VISITOR_ATTRIBUTES.map((a) => [a, keptValue(db, a)])),
      }),
    ),
  { pieces: true },
);

/** The batch's events folded into one tuple per website and visitor. */
function totalsTuples(events: RecordedEvent[]): TotalsTuple[] {
  const byVisitor = new Map<string, TotalsTuple>();
  for (const e of events) {
    const key = `${e.websiteId}\u0000${e.visitorId}`;
    const attributes = attributesOf(e);
    let row = byVisitor.get(key);
    if (!row) byVisitor.set(key, (row = [e.websiteId, e.visitorId, e.occurredAt, e.occurredAt, 0, 0, 0, null, null, 0, ...attributes]));
    if (e.occurredAt < row[2]) row[2] = e.occurredAt;
    if (e.occurredAt > row[3]) row[3] = e.occurredAt;
    if (e.type === 'pageview') row[4] += 1;
    row[5] += 1;
    if (e.type === 'custom' && e.name !== null) row[6] += 1;
    if (e.path !== null && (row[7] === null || e.occurredAt > row[7] || (e.occurredAt === row[7] && e.id > row[8]!))) {
      row[7] = e.occurredAt;
      row[8] = e.id;
    }
    attributes.forEach((value, i) => {
      if (value !== row[ATTRIBUTES_AT + i]) row[9] |= attributeBit(VISITOR_ATTRIBUTES[i]!);
    });
  }
  const rows = [...byVisitor.values()];
  for (const row of rows) {
    VISITOR_ATTRIBUTES.forEach((a, i) => {
      if ((row[9] & attributeBit(a)) !== 0) row[ATTRIBUTES_AT + i] = null;
    });
  }
  return rows;
}

/**
 * The visitors of these tuples whose stored row is steady (varied = 0) and whom the batch makes
 * vary: their stored attributes disagree with the batch's, or the batch's among themselves.
 */
async function startingToVary(trx: Kysely<Database>, tuples: TotalsTuple[]): Promise<{ websiteId: string; visitorIds: string[] }[]> {
  const found: { websiteId: string; visitorIds: string[] }[] = [];
  const byWebsite = new Map<string, Map<string, TotalsTuple>>();
  for (const tuple of tuples) {
    const batch = byWebsite.get(tuple[0]) ?? new Map<string, TotalsTuple>();
    byWebsite.set(tuple[0], batch.set(tuple[1], tuple));
  }
  for (const [websiteId, batch] of byWebsite) {
    const visitorIds: string[] = [];
    for (const ids of chunks([...batch.keys()], ROWS_PER_INSERT)) {
      const stored = await trx
        .selectFrom('visitor_totals')
        .select(['visitor_id', ...VISITOR_ATTRIBUTES])
        .where('website_id', '=', websiteId)
        .where(sql<boolean>`visitor_id in (${sqlList(ids)})`)
        .where('varied', '=', 0)
        .execute();
      for (const row of stored) {
        const tuple = batch.get(row.visitor_id)!;
        if (tuple[9] !== 0 || VISITOR_ATTRIBUTES.some((a, i) => row[a] !== tuple[ATTRIBUTES_AT + i])) visitorIds.push(row.visitor_id);
      }
    }
    if (visitorIds.length > 0) found.push({ websiteId, visitorIds });
  }
  return found;
}

/**
 * After a batch of events is inserted, in its transaction, before the breakdown rollups: the
 * visitors whose attributes start to vary leave breakdown_profiles first, as they were.
 */
export async function updateVisitorTotals(trx: Kysely<Database>, events: RecordedEvent[]): Promise<void> {
  const tuples = totalsTuples(events);
  for (const { websiteId, visitorIds } of await startingToVary(trx, tuples)) await leaveProfiles(trx, websiteId, visitorIds);
  for (const rows of chunks(tuples, ROWS_PER_INSERT)) await upsertTotals.all(trx, rows);
}

/** Whether the visitor's events hold two values of an attribute (unknown counts as one). */
const variesIn = (a: string) => `(count(distinct ${a}) > 1 or (count(${a}) > 0 and count(${a}) < count(*)))`;
const variedBit = (a: (typeof VISITOR_ATTRIBUTES)[number]) => `case when ${variesIn(a)} then ${attributeBit(a)} else 0 end`;

/**
 * Derives the rows of these visitors (or of every visitor) of one website, or of all of them,
 * from their events. Migration 0016 calls this: a change to the columns it writes must first
 * give that migration its own copy.
 */
export async function deriveVisitorTotals<DB>(db: Kysely<DB>, websiteId: string | null, visitorIds?: string[]): Promise<void> {
  const website = websiteId === null ? sql`true` : sql`website_id = ${websiteId}`;
  const visitors = visitorIds === undefined ? sql`true` : sql`visitor_id in (${sql.join(visitorIds)})`;
  const attributes = sql.raw(VISITOR_ATTRIBUTES.join(', '));
  const varied = sql.raw(VISITOR_ATTRIBUTES.map(variedBit).join(' | '));
  const millis = millisBetween(db as unknown as Kysely<Database>, 's.started_at', 's.ended_at');
  await sql`insert into visitor_totals (website_id, visitor_id, first_at, last_at, pageviews, events, goals, latest_at, latest_event_id, varied, ${attributes},
      sessions, bounces, millis)
    select g.website_id, g.visitor_id, g.first_at, g.last_at, g.pageviews, g.events, g.goals, l.occurred_at, l.id, g.varied, ${sql.raw(VISITOR_ATTRIBUTES.map((a) => `g.${a}`).join(', '))},
      coalesce(s.sessions, 0), coalesce(s.bounces, 0), coalesce(s.millis, 0)
    from (
      select website_id, visitor_id, min(occurred_at) as first_at, max(occurred_at) as last_at,
        sum(case when type = 'pageview' then 1 else 0 end) as pageviews, count(*) as events,
        sum(case when type = 'custom' and name is not null then 1 else 0 end) as goals, ${varied} as varied,
        ${sql.raw(VISITOR_ATTRIBUTES.map((a) => `case when ${variesIn(a)} then null else min(${a}) end as ${a}`).join(', '))}
      from events where ${website} and ${visitors} group by website_id, visitor_id
    ) g left join (
      select website_id, visitor_id, occurred_at, id,
        row_number() over (partition by website_id, visitor_id order by occurred_at desc, id desc) as rn
      from events where ${website} and ${visitors} and path is not null
    ) l on l.website_id = g.website_id and l.visitor_id = g.visitor_id and l.rn = 1
    left join (
      select s.website_id, s.visitor_id, count(*) as sessions, sum(case when ${BOUNCE} then 1 else 0 end) as bounces, sum(${millis}) as millis
      from sessions s where ${website} and ${visitors} group by s.website_id, s.visitor_id
    ) s on s.website_id = g.website_id and s.visitor_id = g.visitor_id`.execute(db);
}

/**
 * Adds (1) or takes out (-1) the sessions `where` keeps (over `sessions s`) to their visitors'
 * session counts, bounces and milliseconds: around the batch's session upsert, as the session
 * breakdowns follow it. The visitors' rows exist: the batch's totals were upserted first.
 */
export async function addSessionTotals(trx: Kysely<Database>, where: RawBuilder<unknown>, sign: 1 | -1): Promise<void> {
  const signed = sql.lit(sign);
  // The batch's sessions are read first by their key: grouped in one statement, SQLite walks the
  // website's sessions in visitor order instead (sessions_website_visitor_idx gives the grouping).
  await sql`with batch as materialized (select s.website_id, s.visitor_id, s.started_at, s.ended_at, s.pageviews, s.goals from sessions s where ${where})
    update visitor_totals set
      sessions = visitor_totals.sessions + d.sessions, bounces = visitor_totals.bounces + d.bounces, millis = visitor_totals.millis + d.millis
    from (
      select s.website_id, s.visitor_id, ${signed} * count(*) as sessions, ${signed} * sum(case when ${BOUNCE} then 1 else 0 end) as bounces,
        ${signed} * sum(${millisBetween(trx, 's.started_at', 's.ended_at')}) as millis
      from batch s group by s.website_id, s.visitor_id
    ) d
    where visitor_totals.website_id = d.website_id and visitor_totals.visitor_id = d.visitor_id`.execute(trx);
}

const VISITORS_PER_STATEMENT = 500;

/** After events of these visitors were deleted, in the deleting transaction: their rows derived again (a visitor with no event left has none). */
export async function repairVisitorTotals(db: Kysely<Database>, websiteId: string, visitorIds: string[]): Promise<void> {
  for (const chunk of chunks([...new Set(visitorIds)], VISITORS_PER_STATEMENT)) {
    await db.deleteFrom('visitor_totals').where('website_id', '=', websiteId).where('visitor_id', 'in', chunk).execute();
    await deriveVisitorTotals(db, websiteId, chunk);
  }
}

/** Replaces a website's rows with ones derived from all its events and sessions (so rebuild the sessions first). */
export async function rebuildVisitorTotals(db: Kysely<Database>, websiteId: string): Promise<void> {
  await db.deleteFrom('visitor_totals').where('website_id', '=', websiteId).execute();
  await deriveVisitorTotals(db, websiteId);
}
