import { type Kysely, sql } from 'kysely';
import type { Database } from '../../../db/schema.ts';
import { hourOf } from '../../analytics/hour-rollups.ts';
import { type Span, type TrafficCounts, eventTraffic } from './series-sql.ts';
import { num } from './scope-sql.ts';

// The hourly series from the hour rollups (hour_totals, hour_recency, visitor_hours: migration
// 0036), which the planner picks for an unfiltered hourly series whose buckets lie on UTC hours
// (read-planner.ts 'whole-hours'). Each bucket is one UTC hour, read from its hour_totals row.
// The range's first or last bucket may be part of an hour (a range given to the minute, the
// current hour up to now): it reads its hour's row when the rest of that hour holds no event (the
// last bucket of a read up to now: nothing after `asOf`), or else its own raw events, at most an
// hour of them. Distinct visitors over the range are a sum of hour_recency over its whole hours,
// plus the visitors of the raw edges seen in none of them (visitor_hours).

const HOUR_MS = 3_600_000;

export interface HourTraffic {
  perBucket: Map<number, TrafficCounts>;
  totalVisitors: number;
  totalConverted: number;
}

/**
 * Traffic per bucket (`id` its index) of an hourly series; undefined when a bucket is not within
 * one UTC hour (the planner's shape said otherwise). `asOf`: no event at or after this instant
 * (ms) is part of the read (events recorded since it began), so the rest of an hour past it is
 * not looked at.
 */
export async function hourTraffic(db: Kysely<Database>, websiteId: string, buckets: Span[], distinct: boolean, asOf: number): Promise<HourTraffic | undefined> {
  const covered: { id: number; hour: string }[] = [];
  const edges: Span[] = [];
  for (const bucket of buckets) {
    const start = Date.parse(bucket.from);
    const end = Date.parse(bucket.to);
    const hourStart = Math.floor(start / HOUR_MS) * HOUR_MS;
    if (end > hourStart + HOUR_MS) return undefined;
    const hour = hourOf(new Date(hourStart));
    const before = start > hourStart ? { from: new Date(hourStart).toISOString(), to: bucket.from } : null;
    const afterEnd = Math.min(hourStart + HOUR_MS, asOf);
    const after = end < afterEnd ? { from: bucket.to, to: new Date(afterEnd).toISOString() } : null;
    if ((before || after) && (await anyEvent(db, websiteId, [before, after]))) edges.push(bucket);
    else covered.push({ id: bucket.id, hour });
  }
  if (covered.some((bucket, i) => i > 0 && hourStartMsOf(bucket.hour) !== hourStartMsOf(covered[i - 1]!.hour) + HOUR_MS)) return undefined;

  const perBucket = new Map<number, TrafficCounts>();
  const first = covered[0]?.hour;
  const last = covered.at(-1)?.hour;
  if (first !== undefined && last !== undefined) {
    const rows = await db
      .selectFrom('hour_totals')
      .select(['hour', 'visitors', 'sessions', 'pageviews', 'converted_visitors'])
      .where('website_id', '=', websiteId)
      .where('hour', '>=', first)
      .where('hour', '<=', last)
      .execute();
    const byHour = new Map(rows.map((row) => [row.hour, row]));
    for (const bucket of covered) {
      const row = byHour.get(bucket.hour);
      if (row) perBucket.set(bucket.id, { visitors: num(row.visitors), sessions: num(row.sessions), pageviews: num(row.pageviews), converted: num(row.converted_visitors) });
    }
  }
  if (edges.length > 0) for (const [id, counts] of await eventTraffic(db, websiteId, edges)) perBucket.set(id, counts);
  if (!distinct) return { perBucket, totalVisitors: 0, totalConverted: 0 };

  if (first === undefined || last === undefined) {
    // No whole hour: the range is at most two partial hours, all read from the raw events.
    const whole = { id: -1, from: buckets[0]!.from, to: buckets.at(-1)!.to };
    const total = (await eventTraffic(db, websiteId, [whole])).get(-1);
    return { perBucket, totalVisitors: total?.visitors ?? 0, totalConverted: total?.converted ?? 0 };
  }
  const total = await distinctOverHours(db, websiteId, first, last);
  if (edges.length > 0) {
    const more = await edgeVisitorsOutside(db, websiteId, edges, first, last);
    total.visitors += more.visitors;
    total.converted += more.converted;
  }
  return { perBucket, totalVisitors: total.visitors, totalConverted: total.converted };
}

const hourStartMsOf = (hour: string) => Date.parse(`${hour}:00:00.000Z`);

async function anyEvent(db: Kysely<Database>, websiteId: string, spans: ({ from: string; to: string } | null)[]): Promise<boolean> {
  for (const span of spans) {
    if (!span) continue;
    const found = await db
      .selectFrom('events')
      .select('id')
      .where('website_id', '=', websiteId)
      .where('occurred_at', '>=', span.from)
      .where('occurred_at', '<', span.to)
      .limit(1)
      .executeTakeFirst();
    if (found) return true;
  }
  return false;
}

/** Distinct visitors and converted visitors of the hours [first, last]: the visitor-hours whose previous (converting) hour lies before. */
async function distinctOverHours(db: Kysely<Database>, websiteId: string, first: string, last: string): Promise<{ visitors: number; converted: number }> {
  const row = await db
    .selectFrom('hour_recency')
    .select((eb) => [eb.fn.sum<string | number | null>('visitors').as('visitors'), eb.fn.sum<string | number | null>('converted').as('converted')])
    .where('website_id', '=', websiteId)
    .where('hour', '>=', first)
    .where('hour', '<=', last)
    .where('prev_hour', '<', first)
    .executeTakeFirst();
  return { visitors: num(row?.visitors), converted: num(row?.converted) };
}

/** The visitors of the raw edges with no row in the hours [first, last] (and, converted, with no converting row there). */
async function edgeVisitorsOutside(db: Kysely<Database>, websiteId: string, edges: Span[], first: string, last: string): Promise<{ visitors: number; converted: number }> {
  const within = sql.join(edges.map((edge) => sql`(e.occurred_at >= ${edge.from} and e.occurred_at < ${edge.to})`), sql` or `);
  const rowIn = (extra: ReturnType<typeof sql>) =>
    sql`exists (select 1 from visitor_hours v where v.website_id = ${websiteId} and v.visitor_id = edge.visitor_id and v.hour >= ${first} and v.hour <= ${last} ${extra})`;
  const { rows } = await sql<{ visitors: unknown; converted: unknown }>`
    with edge as (
      select e.visitor_id, max(case when e.type = 'custom' and e.name is not null then 1 else 0 end) as goal
      from events e where e.website_id = ${websiteId} and (${within}) group by e.visitor_id)
    select sum(case when ${rowIn(sql``)} then 0 else 1 end) as visitors,
      sum(case when edge.goal = 1 and not ${rowIn(sql`and v.goals > 0`)} then 1 else 0 end) as converted
    from edge`.execute(db);
  return { visitors: num(rows[0]?.visitors), converted: num(rows[0]?.converted) };
}
