import { type DatabaseIntrospector, type Dialect, type Kysely, type SchemaMetadata, type TableMetadata, sql } from 'kysely';

// Kysely's PostgreSQL introspector reads every table of every schema on the database and looks
// each one up again by name (pg_get_serial_sequence): a schema that another installation, or a
// test, drops meanwhile fails it with "schema ... does not exist". Sightline introspects only to
// migrate, and only its own schema, so its introspector reads the catalogue of that schema alone,
// names only (the migrator looks for its bookkeeping tables and nothing else).

function schemaIntrospector(db: Kysely<unknown>, schema: string): DatabaseIntrospector {
  return {
    async getSchemas(): Promise<SchemaMetadata[]> {
      const { rows } = await sql<{ name: string }>`select nspname as name from pg_catalog.pg_namespace where nspname = ${schema}`.execute(db);
      return rows;
    },
    async getTables(): Promise<TableMetadata[]> {
      const { rows } = await sql<{ name: string; kind: string }>`
        select c.relname as name, c.relkind as kind
        from pg_catalog.pg_class c join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
        where ns.nspname = ${schema} and c.relkind in ('r', 'v', 'p')
        order by c.relname`.execute(db);
      return rows.map((row) => ({ name: row.name, schema, isView: row.kind === 'v', columns: [] }));
    },
    async getMetadata() {
      return { tables: await this.getTables() };
    },
  };
}

/** The dialect with its introspector limited to one PostgreSQL schema. */
export function introspectOneSchema(dialect: Dialect, schema: string): Dialect {
  return {
    createDriver: () => dialect.createDriver(),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => schemaIntrospector(db as Kysely<unknown>, schema),
  };
}
