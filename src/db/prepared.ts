import { type Compilable, CompiledQuery, type Kysely } from 'kysely';
import type { Database } from './schema.ts';

// A query on the request path, built and compiled by Kysely once per database instead of on
// every request (building and compiling cost more than SQLite's own lookup). The builder is
// called once with placeholders in place of its arguments, so it must only pass them into the
// query as values; each call then binds the real values into the same SQL.

class Slot {
  constructor(readonly index: number) {}
}

interface Compiled {
  sql: string;
  parameters: readonly unknown[];
}

export interface PreparedQuery<Args extends unknown[], Row> {
  all(db: Kysely<Database>, ...args: Args): Promise<Row[]>;
  first(db: Kysely<Database>, ...args: Args): Promise<Row | undefined>;
}

function compileWithSlots<Args extends unknown[]>(
  db: Kysely<Database>,
  build: (db: Kysely<Database>, ...args: Args) => Compilable<unknown>,
): Compiled {
  const slots = Array.from({ length: build.length - 1 }, (_, index) => new Slot(index));
  const { sql, parameters } = build(db, ...(slots as unknown as Args)).compile();
  for (const slot of slots) {
    if (!parameters.includes(slot)) throw new Error(`prepared query does not bind argument ${slot.index + 1}: ${sql}`);
  }
  return { sql, parameters };
}

export function prepareQuery<Args extends unknown[], Row>(
  build: (db: Kysely<Database>, ...args: Args) => Compilable<Row>,
): PreparedQuery<Args, Row> {
  const compiled = new WeakMap<Kysely<Database>, Compiled>();
  const all = async (db: Kysely<Database>, ...args: Args): Promise<Row[]> => {
    let query = compiled.get(db);
    if (!query) {
      query = compileWithSlots(db, build);
      compiled.set(db, query);
    }
    const values = query.parameters.map((value) => (value instanceof Slot ? args[value.index] : value));
    const result = await db.executeQuery(CompiledQuery.raw(query.sql, values) as CompiledQuery<Row>);
    return result.rows;
  };
  return { all, first: async (db, ...args) => (await all(db, ...args))[0] };
}
