import { type Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Database } from '../src/db/schema.ts';
import { DERIVATIONS } from '../src/modules/analytics/derivations.ts';
import { BUILT_TABLES, DERIVED_TABLES, type DerivedTable, LOCAL_DAY_TABLES } from '../src/modules/analytics/derived-tables.ts';
import { REBUILD_ORDER } from '../src/modules/analytics/maintainer.ts';
import { TABLES_OWNED_BY_A_WEBSITE } from '../src/modules/websites/website-deletion.ts';
import { useTestApp } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';

// The catalogue of derived tables (src/modules/analytics/derived-tables.ts) against the migrated
// schema: each declared table exists with the columns it groups by as its key, goes with its
// website, and every table that holds a website's rows is a record, a queue, or declared.

/** What a website owns besides what is derived: its records, and the queues of work on them. */
const NOT_DERIVED = [
  'mail_outbox', 'alert_history', 'alerts', 'funnels', 'goal_customizations', 'invitations', 'api_keys', 'integration_jobs', 'integrations',
  'notes', 'visitor_profiles', 'payments', 'events', 'website_members', 'rollup_backlog', 'rollup_relocations', 'derived_builds', 'event_relay',
  // Which funnels the funnel tables keep: bookkeeping of the derived data, set by builds and funnel changes, as derived_builds is.
  'funnel_crossings_kept',
  // Which funnels are being built alone (funnel-build.ts): bookkeeping of the derived data, as derived_builds is.
  'funnel_builds',
  'integration_webhook_events', 'currency_rates', 'shared_links', 'mail_report_subscriptions', 'mail_report_deliveries', 'mail_spike_checks', 'segments',
  // An import's records and the aggregates it brought (0032): kept until the import is deleted, never derived.
  'imports', 'import_uploads', 'import_connections', 'imported_visitors', 'imported_sources', 'imported_pages', 'imported_entry_pages', 'imported_exit_pages',
  'imported_custom_events', 'imported_locations', 'imported_devices', 'imported_browsers', 'imported_operating_systems',
];

/** The table's unique keys (the primary key among them), each as a sorted column list. */
async function uniqueKeys(db: Kysely<Database>, engine: string, table: string): Promise<string[][]> {
  if (engine === 'sqlite') {
    const indexes = await sql<{ name: string; unique: number }>`select name, "unique" from pragma_index_list(${table})`.execute(db);
    const keys: string[][] = [];
    for (const index of indexes.rows.filter((row) => row.unique)) {
      const columns = await sql<{ name: string }>`select name from pragma_index_info(${index.name})`.execute(db);
      keys.push(columns.rows.map((row) => row.name).sort());
    }
    const primary = await sql<{ name: string; pk: number }>`select name, pk from pragma_table_info(${table}) where pk > 0`.execute(db);
    if (primary.rows.length > 0) keys.push(primary.rows.map((row) => row.name).sort());
    return keys;
  }
  const { rows } = await sql<{ name: string; columns: string[] }>`select i.indexrelid::regclass::text as name,
      array(select a.attname from pg_attribute a where a.attrelid = i.indrelid and a.attnum = any(i.indkey))::text[] as columns
    from pg_index i where i.indrelid = to_regclass(${table}) and i.indisunique`.execute(db);
  return rows.map((row) => [...row.columns].sort());
}

/** The migrated tables and their columns (on PostgreSQL, those of the test's own schema). */
async function tablesOf(db: Kysely<Database>, engine: string): Promise<{ name: string; columns: string[] }[]> {
  const { rows } =
    engine === 'sqlite'
      ? await sql<{ table: string; column: string }>`select m.name as "table", c.name as "column"
          from sqlite_master m join pragma_table_info(m.name) c where m.type = 'table'`.execute(db)
      : await sql<{ table: string; column: string }>`select table_name as "table", column_name as "column"
          from information_schema.columns where table_schema = current_schema()`.execute(db);
  const tables = new Map<string, string[]>();
  for (const row of rows) tables.set(row.table, [...(tables.get(row.table) ?? []), row.column]);
  return [...tables].map(([name, columns]) => ({ name, columns }));
}

describeEachEngine('the catalogue of derived tables', (engine) => {
  const t = useTestApp(engine);

  it('declares each derived table as the schema has it, keyed by what it groups by', async () => {
    const tables = await tablesOf(t.db, engine);
    for (const declared of DERIVED_TABLES) {
      const table = tables.find((found) => found.name === declared.name);
      expect(table, declared.name).toBeDefined();
      const columns = table!.columns;
      for (const column of [...declared.groupBy, ...(declared.nonZero ?? [])]) expect(columns, `${declared.name}.${column}`).toContain(column);
      expect(await uniqueKeys(t.db, engine, declared.name), `${declared.name} is keyed by ${declared.groupBy.join(', ')}`).toContainEqual([...declared.groupBy].sort());
      if (declared.localDays) expect(columns.some((column) => column === 'day' || column === 'last_day'), `${declared.name} holds local days`).toBe(true);
    }
    expect(LOCAL_DAY_TABLES).toEqual(['visitor_days', 'daily_totals', 'visitor_recency', 'breakdown_visitors', 'breakdown_days', 'breakdown_last_days', 'breakdown_profile_days', 'breakdown_profile_last_days', 'funnel_visitor_days', 'funnel_crossings']);
  });

  it('finds every table that holds a website\'s rows among its records, its queues or the declared derived tables', async () => {
    const tables = await tablesOf(t.db, engine);
    const owned = tables.filter((table) => table.columns.includes('website_id')).map((table) => table.name).sort();
    const known = [...NOT_DERIVED, ...DERIVED_TABLES.map((table) => table.name)].sort();
    expect(owned).toEqual(known);
    // And a website's deletion takes every one of them.
    expect([...TABLES_OWNED_BY_A_WEBSITE].sort()).toEqual(known);
  });
});

describe('the derivations that keep the catalogue', () => {
  const keepers = (name: string) => DERIVATIONS.filter((derivation) => derivation.keeps.includes(name as never));
  const derivedFrom = (table: DerivedTable, source: string): boolean =>
    table.from.some((from) => from === source || derivedFrom(DERIVED_TABLES.find((other) => other.name === from) ?? { ...table, from: [] }, source));

  it('keep each table the deriver builds, each by one derivation, and no table the catalogue does not declare', () => {
    for (const table of DERIVED_TABLES) expect(keepers(table.name).map((d) => d.name), table.name).toHaveLength(table.keptAtIngestion ? 0 : 1);
    const declared = DERIVED_TABLES.map((table) => table.name as string);
    for (const derivation of DERIVATIONS) for (const name of derivation.keeps) expect(declared, `${derivation.name} keeps ${name}`).toContain(name);
  });

  it('follow every change their tables are derived from: events, payments and moves of local days', () => {
    for (const table of BUILT_TABLES) {
      const [keeper] = keepers(table.name);
      // A sum over other tables' rows per visitor follows them by its leave and join hooks instead.
      const follows = keeper!.fold ?? (keeper!.leave && keeper!.join);
      if (derivedFrom(table, 'events')) expect(follows, `${keeper!.name} folds events into ${table.name}`).toBeTypeOf('function');
      if (table.from.includes('payments')) expect(keeper!.payments, `${keeper!.name} moves payments in ${table.name}`).toBeTypeOf('function');
      if (table.localDays) expect(keeper!.move, `${keeper!.name} moves the local days of ${table.name}`).toBeTypeOf('function');
    }
  });

  it('rebuild each derivation after those keeping what its tables are derived from', () => {
    for (const [index, derivation] of REBUILD_ORDER.entries()) {
      const sources = DERIVED_TABLES.filter((table) => derivation.keeps.includes(table.name)).flatMap((table) => table.from);
      for (const source of sources) {
        const keeper = keepers(source)[0];
        if (keeper && keeper !== derivation) expect(REBUILD_ORDER.indexOf(keeper), `${keeper.name} before ${derivation.name}`).toBeLessThan(index);
      }
    }
    expect(REBUILD_ORDER).toHaveLength(DERIVATIONS.length);
  });
});
