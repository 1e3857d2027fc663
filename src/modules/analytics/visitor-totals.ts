import { type Kysely, sql } from 'kysely';
import { prepareListQuery } from '../../db/prepared.ts';
import type { Database } from '../../db/schema.ts';
import { chunks } from '../../lib/chunks.ts';
import type { RecordedEvent } from '../events/event.types.ts';

// Keeps visitor_totals: per website and visitor, all time, the first and last event, pageviews
// and events, so the unfiltered visitor list (newest activity first, with its full count) reads
// one row per visitor from an index instead of grouping every event. Ingestion folds a batch's
// events into one row per visitor (one upsert per batch); a server-goal delete derives the
// touched visitors again from their remaining events; a rebuild derives a whole website (the
// migration, the bench's bulk load).

type TotalsTuple = [websiteId: string, visitorId: string, firstAt: string, lastAt: string, pageviews: number, events: number];

const ROWS_PER_INSERT = 500;

const earlier = (column: string) => sql.raw<string>(`case when excluded.${column} < visitor_totals.${column} then excluded.${column} else visitor_totals.${column} end`);
const later = (column: string) => sql.raw<string>(`case when excluded.${column} > visitor_totals.${column} then excluded.${column} else visitor_totals.${column} end`);

const upsertTotals = prepareListQuery(6, (db, rows: TotalsTuple[]) =>
  db
    .insertInto('visitor_totals')
    .values(rows.map((r) => ({ website_id: r[0], visitor_id: r[1], first_at: r[2], last_at: r[3], pageviews: r[4], events: r[5] })))
    .onConflict((oc) =>
      oc.columns(['website_id', 'visitor_id']).doUpdateSet({
        first_at: earlier('first_at'),
        last_at: later('last_at'),
        pageviews: sql`visitor_totals.pageviews + excluded.pageviews`,
        events: sql`visitor_totals.events + excluded.events`,
      }),
    ),
);

/** The batch's events folded into one tuple per website and visitor. */
function totalsTuples(events: RecordedEvent[]): TotalsTuple[] {
  const byVisitor = new Map<string, TotalsTuple>();
  for (const e of events) {
    const key = `${e.websiteId}\u0000${e.visitorId}`;
    let row = byVisitor.get(key);
    if (!row) byVisitor.set(key, (row = [e.websiteId, e.visitorId, e.occurredAt, e.occurredAt, 0, 0]));
    if (e.occurredAt < row[2]) row[2] = e.occurredAt;
    if (e.occurredAt > row[3]) row[3] = e.occurredAt;
    if (e.type === 'pageview') row[4] += 1;
    row[5] += 1;
  }
  return [...byVisitor.values()];
}

/** After a batch of events is inserted, in its transaction. */
export async function updateVisitorTotals(trx: Kysely<Database>, events: RecordedEvent[]): Promise<void> {
  for (const rows of chunks(totalsTuples(events), ROWS_PER_INSERT)) await upsertTotals.all(trx, rows);
}

/** Derives the rows of these visitors (or of every visitor) of one website, or of all of them, from their events. */
export async function deriveVisitorTotals<DB>(db: Kysely<DB>, websiteId: string | null, visitorIds?: string[]): Promise<void> {
  const website = websiteId === null ? sql`true` : sql`website_id = ${websiteId}`;
  const visitors = visitorIds === undefined ? sql`true` : sql`visitor_id in (${sql.join(visitorIds)})`;
  await sql`insert into visitor_totals (website_id, visitor_id, first_at, last_at, pageviews, events)
    select website_id, visitor_id, min(occurred_at), max(occurred_at), sum(case when type = 'pageview' then 1 else 0 end), count(*)
    from events where ${website} and ${visitors} group by website_id, visitor_id`.execute(db);
}

const VISITORS_PER_STATEMENT = 500;

/** After events of these visitors were deleted, in the deleting transaction: their rows derived again (a visitor with no event left has none). */
export async function repairVisitorTotals(db: Kysely<Database>, websiteId: string, visitorIds: string[]): Promise<void> {
  for (const chunk of chunks([...new Set(visitorIds)], VISITORS_PER_STATEMENT)) {
    await db.deleteFrom('visitor_totals').where('website_id', '=', websiteId).where('visitor_id', 'in', chunk).execute();
    await deriveVisitorTotals(db, websiteId, chunk);
  }
}

/** Replaces a website's rows with ones derived from all its events. */
export async function rebuildVisitorTotals(db: Kysely<Database>, websiteId: string): Promise<void> {
  await db.deleteFrom('visitor_totals').where('website_id', '=', websiteId).execute();
  await deriveVisitorTotals(db, websiteId);
}
