import { DateTime } from 'luxon';
import { type RawBuilder, sql } from 'kysely';
import type { Engine } from '../../db/database.ts';

// The local day (YYYY-MM-DD) of a stored instant, computed by the database, for rollups derived
// set-based from the events: SQLite has no time zones, so the zone's UTC offsets over the span of
// the events are worked out here (luxon, the same rules as every other local day of Sightline)
// and the SQL shifts each instant by the offset in force at it. A span crosses an offset change
// about twice a year, so the expression stays a short CASE.

/** A UTC offset in seconds, in force from `from` (ms since the epoch; null: from the start of the span). */
export interface OffsetPeriod {
  from: number | null;
  seconds: number;
}

/** No zone changes its offset twice within six hours, so checking every six hours finds each change. */
const STEP_MS = 6 * 3_600_000;

const offsetAt = (ms: number, timezone: string) => Math.round(DateTime.fromMillis(ms, { zone: timezone }).offset * 60);

/** Spans are worked out over whole blocks of this many milliseconds, so nearby spans share one. */
const BLOCK_MS = 32 * 86_400_000;
const CACHE_SIZE = 1000;
const blocks = new Map<string, OffsetPeriod[]>();

/** The offsets of `timezone` in force between two instants (ms), both included. */
export function offsetPeriods(timezone: string, firstMs: number, lastMs: number): OffsetPeriod[] {
  // Luxon's offset lookups cost about a millisecond per month of span: a chunk of a time-zone
  // move or a batch of ingestion asks for nearly the same span again and again, so the blocks
  // around it are kept, and the span cut out of them.
  const from = Math.floor(firstMs / BLOCK_MS) * BLOCK_MS;
  const to = Math.ceil((lastMs + 1) / BLOCK_MS) * BLOCK_MS;
  const key = `${timezone}|${from}|${to}`;
  let wide = blocks.get(key);
  if (!wide) {
    wide = periodsBetween(timezone, from, to);
    if (blocks.size >= CACHE_SIZE) blocks.delete(blocks.keys().next().value!);
    blocks.set(key, wide);
  }
  // The period in force at firstMs opens the span; those that start after lastMs are not in it.
  let opening = 0;
  for (let i = 1; i < wide.length && wide[i]!.from! <= firstMs; i++) opening = i;
  const periods: OffsetPeriod[] = [{ from: null, seconds: wide[opening]!.seconds }];
  for (let i = opening + 1; i < wide.length && wide[i]!.from! <= lastMs; i++) periods.push(wide[i]!);
  return periods;
}

function periodsBetween(timezone: string, firstMs: number, lastMs: number): OffsetPeriod[] {
  const periods: OffsetPeriod[] = [{ from: null, seconds: offsetAt(firstMs, timezone) }];
  for (let start = firstMs; start < lastMs; start += STEP_MS) {
    const end = Math.min(start + STEP_MS, lastMs);
    const current = periods[periods.length - 1]!.seconds;
    if (offsetAt(end, timezone) === current) continue;
    // The first millisecond of the new offset, by bisection.
    let lo = start;
    let hi = end;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (offsetAt(mid, timezone) === current) lo = mid;
      else hi = mid;
    }
    periods.push({ from: hi, seconds: offsetAt(hi, timezone) });
  }
  return periods;
}

function shifted(engine: Engine, column: RawBuilder<unknown>, seconds: number): RawBuilder<string> {
  if (engine === 'postgres') return sql<string>`to_char((${column} at time zone 'UTC') + interval '1 second' * ${sql.lit(seconds)}, 'YYYY-MM-DD')`;
  return sql<string>`date(${column}, ${sql.lit(`${seconds >= 0 ? '+' : ''}${seconds} seconds`)})`;
}

/** The local day of `column` (an instant inside the span `periods` covers), as YYYY-MM-DD. */
export function localDaySql(engine: Engine, column: RawBuilder<unknown>, periods: OffsetPeriod[]): RawBuilder<string> {
  const last = periods[periods.length - 1]!;
  if (periods.length === 1) return shifted(engine, column, last.seconds);
  const whens = periods.slice(0, -1).map((period, i) => {
    const until = new Date(periods[i + 1]!.from!).toISOString();
    return sql`when ${column} < ${until} then ${shifted(engine, column, period.seconds)}`;
  });
  return sql<string>`(case ${sql.join(whens, sql` `)} else ${shifted(engine, column, last.seconds)} end)`;
}

/** What the local day of an event needs: per website, its time zone's offsets over the events' span. */
export type WebsiteOffsets = Map<string, OffsetPeriod[]>;

/**
 * The local day of each row's instant in its own website's zone (the websites of `offsets` only):
 * an event's `e.occurred_at` by default, a session's `s.started_at` with `row` 's'.
 */
export function rowDaySql(engine: Engine, offsets: WebsiteOffsets, row: 'e' | 's' = 'e'): RawBuilder<string> {
  const column = sql.ref(row === 'e' ? 'e.occurred_at' : 's.started_at');
  const entries = [...offsets];
  if (entries.length === 1) return localDaySql(engine, column, entries[0]![1]);
  const whens = entries.map(([websiteId, periods]) => sql`when ${websiteId} then ${localDaySql(engine, column, periods)}`);
  return sql<string>`(case ${sql.ref(`${row}.website_id`)} ${sql.join(whens, sql` `)} end)`;
}

/** Offsets per website over spans of instants (ms), given each website's zone. */
export function offsetsOver(spans: Map<string, { first: number; last: number }>, timezones: Map<string, string>): WebsiteOffsets {
  const offsets: WebsiteOffsets = new Map();
  for (const [websiteId, span] of spans) {
    const timezone = timezones.get(websiteId);
    if (timezone !== undefined) offsets.set(websiteId, offsetPeriods(timezone, span.first, span.last));
  }
  return offsets;
}

/** Offsets per website over the instants of its events (ISO strings), given each website's zone. */
export function offsetsOf(events: { websiteId: string; occurredAt: string }[], timezones: Map<string, string>): WebsiteOffsets {
  const spans = new Map<string, { first: number; last: number }>();
  for (const event of events) {
    const ms = Date.parse(event.occurredAt);
    const span = spans.get(event.websiteId);
    if (!span) spans.set(event.websiteId, { first: ms, last: ms });
    else {
      if (ms < span.first) span.first = ms;
      if (ms > span.last) span.last = ms;
    }
  }
  return offsetsOver(spans, timezones);
}
