import type { ExpressionBuilder, Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { RecordedEvent } from '../../db/event-records.ts';

// Which zone each visitor's day rollups are in while the website's days move to a new zone
// (day-relocation.ts): visitors up to the move's cursor, byte order of their ids, are in the new
// zone, the rest in the old one. Whatever writes day rollups meanwhile asks here.

/** A website's move, as stored. */
export interface Relocation {
  from: string;
  to: string;
  /** The last visitor (byte order) whose days are in `to`; null before the first chunk. */
  cursor: string | null;
}

const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** The zone a visitor's days are in while the website's days move. */
export function zoneOfVisitor(relocation: Relocation, visitorId: string): string {
  return relocation.cursor !== null && byteOrder(visitorId, relocation.cursor) <= 0 ? relocation.to : relocation.from;
}

/** The moves under way among these websites. Read under their derived-data locks, so the cursors hold until commit. */
export async function relocationsOf(db: Kysely<Database>, websiteIds: string[]): Promise<Map<string, Relocation>> {
  if (websiteIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('rollup_relocations')
    .select(['website_id', 'from_timezone', 'to_timezone', 'cursor'])
    .where('website_id', 'in', websiteIds)
    .execute();
  return new Map(rows.map((row) => [row.website_id, { from: row.from_timezone, to: row.to_timezone, cursor: row.cursor }]));
}

/** One part of a batch whose days go into one zone per website. */
export interface ZonedPart {
  events: RecordedEvent[];
  zones: Map<string, string>;
}

/**
 * Splits a batch by the zone its visitors' days are in: one part when no website of it is moving,
 * else the events of visitors still in their website's old zone and those already moved.
 */
export async function splitByZone(db: Kysely<Database>, events: RecordedEvent[], timezones: Map<string, string>): Promise<ZonedPart[]> {
  const moving = await relocationsOf(db, [...timezones.keys()]);
  if (moving.size === 0) return [{ events, zones: timezones }];
  const before: ZonedPart = { events: [], zones: new Map(timezones) };
  const after: ZonedPart = { events: [], zones: new Map(timezones) };
  for (const [websiteId, relocation] of moving) {
    before.zones.set(websiteId, relocation.from);
    after.zones.set(websiteId, relocation.to);
  }
  for (const event of events) {
    const relocation = moving.get(event.websiteId);
    if (relocation && zoneOfVisitor(relocation, event.visitorId) === relocation.to) after.events.push(event);
    else before.events.push(event);
  }
  return [before, after].filter((part) => part.events.length > 0);
}

/**
 * These visitors grouped by the zone their days are in (all in the website's own when it is not
 * moving), and whether it is moving.
 */
export async function visitorsByZone(db: Kysely<Database>, websiteId: string, timezone: string, visitorIds: string[]) {
  const relocation = (await relocationsOf(db, [websiteId])).get(websiteId);
  const groups = new Map<string, string[]>();
  for (const visitorId of new Set(visitorIds)) {
    const zone = relocation ? zoneOfVisitor(relocation, visitorId) : timezone;
    const group = groups.get(zone);
    if (group) group.push(visitorId);
    else groups.set(zone, [visitorId]);
  }
  return { moving: relocation !== undefined, groups };
}

/**
 * In a select over `websites`: whether the website's day rollups are being moved or built, so
 * reads must not use them (0/1 on SQLite, a boolean on PostgreSQL).
 */
export const daysMoving = (eb: ExpressionBuilder<Database, 'websites'>) =>
  eb.or([
    eb.exists(eb.selectFrom('rollup_relocations').select('rollup_relocations.website_id').whereRef('rollup_relocations.website_id', '=', 'websites.id')),
    derivedDataBuilding(eb),
  ]);

/**
 * In a select over `websites`: whether a build of the website's derived tables runs
 * (derived-build.ts), so reads must not use any rollup, the all-time ones included.
 */
export const derivedDataBuilding = (eb: ExpressionBuilder<Database, 'websites'>) =>
  eb.exists(eb.selectFrom('derived_builds').select('derived_builds.website_id').whereRef('derived_builds.website_id', '=', 'websites.id'));
