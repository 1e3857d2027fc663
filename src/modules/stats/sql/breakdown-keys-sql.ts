import { type RawBuilder, sql } from 'kysely';
import type { Engine } from '../../../db/database.ts';
import type { BreakdownSpec } from '../../analytics/breakdown-specs.ts';

// What the raw reads of a breakdown and the reads of its rollups share about keys: a stored key
// (a JSON array, spelled by src/modules/analytics/breakdown-keys.ts) taken apart and sorted as
// the raw read sorts its key columns, and a row's key names and key as the revenue maps spell it.

/** The `index`th value of a stored key (null for a JSON null), to sort rows as the raw read sorts its columns. */
export function keyElement(engine: Engine, column: RawBuilder<unknown>, index: number): RawBuilder<string | null> {
  return engine === 'postgres' ? sql<string | null>`(${column}::json ->> ${sql.lit(index)})` : sql<string | null>`(${column} ->> ${sql.lit(index)})`;
}

/** Stored keys (`column`) sorted as the raw read sorts its key columns: each value, unknown last. */
export function storedKeyOrder(engine: Engine, column: RawBuilder<unknown>, names: string[]): RawBuilder<unknown> {
  const elements = names.map((_, i) => keyElement(engine, column, i));
  return sql.join(elements.map((element) => sql`case when ${element} is null then 1 else 0 end, ${element}`));
}

/** A row with its key columns as `k_<name>`, its visitors, pageviews and rows (`n`). */
export type KeyedRow = Record<string, unknown>;

export const keyNames = (spec: BreakdownSpec) => Object.keys(spec.keys);

/** A row's key as the revenue maps spell it. */
export const keyOf = (row: Record<string, unknown>, names: string[]) => JSON.stringify(names.map((name) => row[`k_${name}`] ?? null));
