import { type Compilable, CompiledQuery, type Kysely } from 'kysely';
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

/**
 * A query over a list of items (the rows of a multi-row INSERT, the values of an IN list), compiled
 * once per list length. The builder receives `items` as rows of `width` placeholders and the
 * other arguments as placeholders, and must pass every one of them into the query as a value.
 */
export function prepareListQuery<Item extends readonly unknown[], Args extends unknown[], Row>(
  width: number,
  build: (db: Kysely<Database>, items: Item[], ...args: Args) => Compilable<Row>,
): PreparedListQuery<Item, Args, Row> {
  const compiled = new WeakMap<Adapter, Map<number, Compiled>>();
  return {
    async all(db, items, ...args) {
      if (items.length === 0) throw new Error('a prepared list query needs at least one item');
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
    },
  };
}
