import { type RawBuilder, sql } from 'kysely';
import type { Engine } from '../../db/database.ts';
import { BREAKDOWNS, type Breakdown } from './breakdowns.ts';
import { BREAKDOWN_SPECS, type EventKind } from './breakdown-specs.ts';

// The SQL of a breakdown's key over a row of the events or sessions table, and which events and
// breakdowns the rollups keep, shared by the rollups that keep the all-time breakdowns
// (breakdown-rollups.ts for those over events, session-breakdown-rollups.ts for those over
// sessions, with breakdown-revenue.ts and breakdown-profiles.ts), the raw reads and the reads of
// those rollups (src/modules/stats/sql/).

/** The events each kind keeps, over the events table `e`. */
export const EVENT_KIND_CONDITION: Record<EventKind, RawBuilder<unknown>> = {
  pageviews: sql`e.type = 'pageview'`,
  goals: sql`e.type = 'custom' and e.name is not null`,
  'link-clicks': sql`e.type = 'external_link' and e.link_url is not null`,
};

/** The breakdowns over events, whose rollups ingestion derives from each batch's events. */
export const EVENT_BREAKDOWNS: readonly Breakdown[] = BREAKDOWNS.filter((kind) => BREAKDOWN_SPECS[kind].from === 'events');

/** The breakdowns over sessions, whose rollups follow the sessions' upserts. */
export const SESSION_BREAKDOWNS: readonly Breakdown[] = BREAKDOWNS.filter((kind) => BREAKDOWN_SPECS[kind].from === 'sessions');

/**
 * A row's key for a breakdown as one text value: a JSON array of the key columns of `row` (an
 * alias of the events or sessions table), built by the engine, so every writer of a rollup
 * spells a key the same way (null-safe, unlike a composite unique key, where nulls never
 * conflict).
 */
export function keyJson(engine: Engine, kind: Breakdown, row = 'e'): RawBuilder<string> {
  return jsonArray(engine, Object.values(BREAKDOWN_SPECS[kind].keys).map((column) => sql.raw(`${row}.${column}`)));
}

/** These values as one JSON array text, spelled by the engine (a stored key or visitor profile). */
export function jsonArray(engine: Engine, values: RawBuilder<unknown>[]): RawBuilder<string> {
  const joined = sql.join(values);
  return engine === 'postgres' ? sql<string>`json_build_array(${joined})::text` : sql<string>`json_array(${joined})`;
}
