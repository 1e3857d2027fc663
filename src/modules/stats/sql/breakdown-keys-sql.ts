import { type RawBuilder, sql } from 'kysely';
import type { Engine } from '../../../db/database.ts';
import { BREAKDOWNS, type Breakdown } from '../event-store.ts';
import { BREAKDOWN_SPECS, type BreakdownSpec, type EventKind } from '../breakdown-specs.ts';

// The SQL of a breakdown's key over the events table `e`, shared by the raw reads, the rollups
// that keep the all-time event breakdowns (src/modules/analytics/breakdown-rollups.ts) and the
// reads of those rollups.

/** The events each kind keeps, over the events table `e`. */
export const EVENT_KIND_CONDITION: Record<EventKind, RawBuilder<unknown>> = {
  pageviews: sql`e.type = 'pageview'`,
  goals: sql`e.type = 'custom' and e.name is not null`,
  'link-clicks': sql`e.type = 'external_link' and e.link_url is not null`,
};

/** The breakdowns kept as all-time rollups: every one over events (the others group sessions). */
export const ROLLED_UP_BREAKDOWNS: readonly Breakdown[] = BREAKDOWNS.filter((kind) => BREAKDOWN_SPECS[kind].from === 'events');

export const isRolledUp = (kind: Breakdown): boolean => ROLLED_UP_BREAKDOWNS.includes(kind);

/**
 * An event's key for a breakdown as one text value: a JSON array of the key columns, built by the
 * engine, so every writer of a rollup spells a key the same way (null-safe, unlike a composite
 * unique key, where nulls never conflict).
 */
export function keyJson(engine: Engine, kind: Breakdown): RawBuilder<string> {
  const columns = sql.join(Object.values(BREAKDOWN_SPECS[kind].keys).map((column) => sql.ref(`e.${column}`)));
  return engine === 'postgres' ? sql<string>`json_build_array(${columns})::text` : sql<string>`json_array(${columns})`;
}

/** The `index`th value of a stored key (null for a JSON null), to sort rows as the raw read sorts its columns. */
export function keyElement(engine: Engine, column: RawBuilder<unknown>, index: number): RawBuilder<string | null> {
  return engine === 'postgres' ? sql<string | null>`(${column}::json ->> ${sql.lit(index)})` : sql<string | null>`(${column} ->> ${sql.lit(index)})`;
}

/** A row with its key columns as `k_<name>`, its visitors, pageviews and rows (`n`). */
export type KeyedRow = Record<string, unknown>;

export const keyNames = (spec: BreakdownSpec) => Object.keys(spec.keys);

/** A row's key as the revenue maps spell it. */
export const keyOf = (row: Record<string, unknown>, names: string[]) => JSON.stringify(names.map((name) => row[`k_${name}`] ?? null));
