import type { Kysely } from 'kysely';

/**
 * Imports read from an Umami database (issue 37 item 1, second source). `import_connections`
 * holds the source's connection URL, sealed with the credential keys (it carries a password), for
 * as long as the import's job needs it: it is deleted when the import ends (done, failed or
 * deleted). `imports.days_total` / `days_done` are the progress of a source read day by day.
 */
export function umamiImports() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('import_connections')
        .addColumn('import_id', 'text', (c) => c.primaryKey().references('imports.id').onDelete('cascade'))
        .addColumn('website_id', 'text', (c) => c.notNull().references('websites.id').onDelete('cascade'))
        .addColumn('key_id', 'text', (c) => c.notNull())
        .addColumn('ciphertext', 'text', (c) => c.notNull())
        .execute();
      await db.schema.alterTable('imports').addColumn('days_total', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.alterTable('imports').addColumn('days_done', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('imports').dropColumn('days_done').execute();
      await db.schema.alterTable('imports').dropColumn('days_total').execute();
      await db.schema.dropTable('import_connections').execute();
    },
  };
}
