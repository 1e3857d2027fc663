import type { Kysely } from 'kysely';

/**
 * Imports of Sightline's own raw export (issue 37 item 1, third source): its events, payments and
 * records land as ordinary rows of the target website, so every read answers them exactly as the
 * exporting installation did. `import_raw_rows` names each row an import stored (its kind: event,
 * payment, funnel, note, visitorProfile, goalCustomization, currencyRate; and the row's id or key),
 * so the import can be deleted as one, in chunks, and nothing else with it.
 */
export function importRawRows() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('import_raw_rows')
        .addColumn('import_id', 'text', (c) => c.notNull().references('imports.id').onDelete('cascade'))
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('row_id', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('import_raw_rows_pk', ['import_id', 'kind', 'row_id'])
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('import_raw_rows').execute();
    },
  };
}
