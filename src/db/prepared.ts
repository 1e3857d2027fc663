import { type Compilable, CompiledQuery, type Kysely, type RawBuilder, sql } from 'kysely';
import { isPostgres } from './engine.ts';
import type { Database } from './schema.ts';

// A query on the request path, built and compiled by Kysely once per database instead of on
// every request (building and compiling cost more than SQLite's own lookup). The builder is
// called once with placeholders in place of its arguments, so it must only pass them into the
// query as values; each call then binds the real values into the same SQL.
//
// The compiled SQL is kept per dialect adapter, which a database shares with its transactions
// (a transaction is a new Kysely instance on every call, the adapter is the database's), so a
// query prepared outside a transaction is reused inside one. No query-transforming plugin is
// in use; one would have to be part of the key.

class Slot {
  /** `row` is -1 for a plain argument, or the row of a list item (then `index` is its column). */
  constructor(
    readonly index: number,
    readonly row = -1,
  ) {}
}

interface Compiled {
  sql: string;
  parameters: readonly unknown[];
}

type Adapter = object;
const adapterOf = (db: Kysely<Database>): Adapter => db.getExecutor().adapter;

export interface PreparedQuery<Args extends unknown[], Row> {
  all(db: Kysely<Database>, ...args: Args): Promise<Row[]>;
  first(db: Kysely<Database>, ...args: Args): Promise<Row | undefined>;
}

function compileWithSlots(db: Kysely<Database>, build: (db: Kysely<Database>, ...slots: unknown[]) => Compilable<unknown>, slots: Slot[], items?: Slot[][]): Compiled {
  const { sql, parameters } = (items ? build(db, items, ...slots) : build(db, ...slots)).compile();
  const bound = new Set(parameters);
  for (const slot of slots) {
    if (!bound.has(slot)) throw new Error(`prepared query does not bind argument ${slot.index + 1}: ${sql}`);
  }
  for (const slot of items?.flat() ?? []) {
    if (!bound.has(slot)) throw new Error(`prepared list query does not bind column ${slot.index + 1} of its items: ${sql}`);
  }
  return { sql, parameters };
}

async function run<Row>(db: Kysely<Database>, query: Compiled, bind: (slot: Slot) => unknown): Promise<Row[]> {
  const values = query.parameters.map((value) => (value instanceof Slot ? bind(value) : value));
  const result = await db.executeQuery(CompiledQuery.raw(query.sql, values) as CompiledQuery<Row>);
  return result.rows;
}

export function prepareQuery<Args extends unknown[], Row>(
  build: (db: Kysely<Database>, ...args: Args) => Compilable<Row>,
): PreparedQuery<Args, Row> {
  const compiled = new WeakMap<Adapter, Compiled>();
  const all = async (db: Kysely<Database>, ...args: Args): Promise<Row[]> => {
    const adapter = adapterOf(db);
    let query = compiled.get(adapter);
    if (!query) {
      const slots = Array.from({ length: build.length - 1 }, (_, index) => new Slot(index));
      query = compileWithSlots(db, build as never, slots);
      compiled.set(adapter, query);
    }
    return run<Row>(db, query, (slot) => args[slot.index]);
  };
  return { all, first: async (db, ...args) => (await all(db, ...args))[0] };
}

export interface PreparedListQuery<Item extends readonly unknown[], Args extends unknown[], Row> {
  /** Runs the query over `items` (at most the caller's chunk size: bound parameters have limits). */
  all(db: Kysely<Database>, items: readonly Item[], ...args: Args): Promise<Row[]>;
}

/** How many list lengths of one query keep their compiled SQL (the oldest is dropped first). */
const LENGTHS_KEPT = 64;

/** Lists up to this long run as they are when a query runs in pieces; longer ones in pieces of a power of two and a rest this short. */
const EXACT_PIECE = 16;

/**
 * The lengths a list of `length` items runs in with `pieces`: the greatest powers of two while
 * more than EXACT_PIECE are left, then the rest (250: 128, 64, 32, 16, 10).
 */
export function pieceLengths(length: number): number[] {
  const lengths: number[] = [];
  let left = length;
  while (left > EXACT_PIECE) {
    const piece = 2 ** Math.floor(Math.log2(left));
    lengths.push(piece);
    left -= piece;
  }
  if (left > 0) lengths.push(left);
  return lengths;
}

/**
 * `values` as the items of an IN list, padded to a power of two by repeating the last one (the
 * same set), so a statement built around a list of any length has one of a few texts: SQLite
 * then finds it prepared in the connection's cache (sqlite-driver.ts) instead of parsing and
 * planning it again. The derived-data thread's fold spent 447 ms of 10,235 events preparing
 * statements whose text changed with each batch's number of events, sessions or visitors.
 */
export function sqlList(values: readonly unknown[]): RawBuilder<unknown> {
  if (values.length === 0) throw new Error('an IN list needs at least one value');
  const padded = [...values];
  while ((padded.length & (padded.length - 1)) !== 0) padded.push(values[values.length - 1]);
  return sql.join(padded);
}

/**
 * A query over a list of items (the rows of a multi-row INSERT, the values of an IN list), compiled
 * once per list length. The builder receives `items` as rows of `width` placeholders and the
 * other arguments as placeholders, and must pass every one of them into the query as a value.
 *
 * With `pieces`, on SQLite a list runs in pieces of a few lengths (pieceLengths), the rows of
 * each piece's answer one after the other: for queries whose lists take every length (the
 * derived-data thread's fold, whose batches vary), so that their statements stay prepared instead
 * of one text per length pushing the others out of the connection's cache. Only for a query whose
 * answer over a list is the answers over its parts (an INSERT of distinct rows, a select of rows
 * per item): never one that orders, limits or combines items across the list.
 */
export function prepareListQuery<Item extends readonly unknown[], Args extends unknown[], Row>(
  width: number,
  build: (db: Kysely<Database>, items: Item[], ...args: Args) => Compilable<Row>,
  options: { pieces?: boolean } = {},
): PreparedListQuery<Item, Args, Row> {
  const compiled = new WeakMap<Adapter, Map<number, Compiled>>();
  const whole = async (db: Kysely<Database>, items: readonly Item[], args: Args): Promise<Row[]> => {
    const adapter = adapterOf(db);
    let byLength = compiled.get(adapter);
    if (!byLength) {
      byLength = new Map();
      compiled.set(adapter, byLength);
    }
    let query = byLength.get(items.length);
    if (!query) {
      const slots = Array.from({ length: build.length - 2 }, (_, index) => new Slot(index));
      const rows = Array.from({ length: items.length }, (_, row) => Array.from({ length: width }, (_, column) => new Slot(column, row)));
      query = compileWithSlots(db, build as never, slots, rows);
      if (byLength.size >= LENGTHS_KEPT) byLength.delete(byLength.keys().next().value!);
      byLength.set(items.length, query);
    }
    return run<Row>(db, query, (slot) => (slot.row === -1 ? args[slot.index] : items[slot.row]![slot.index]));
  };
  return {
    async all(db, items, ...args) {
      if (items.length === 0) throw new Error('a prepared list query needs at least one item');
      if (!options.pieces || items.length <= EXACT_PIECE || isPostgres(db)) return whole(db, items, args);
      const rows: Row[] = [];
      let at = 0;
      for (const length of pieceLengths(items.length)) {
        rows.push(...(await whole(db, items.slice(at, at + length), args)));
        at += length;
      }
      return rows;
    },
  };
}
