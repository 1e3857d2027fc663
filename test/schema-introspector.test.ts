import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { POSTGRES_URL, asPostgresAdmin, postgresProblem } from './helpers/engines.ts';

// Sightline's PostgreSQL introspector (the migrator's only use of one) reads its own schema
// alone: Kysely's reads every schema on the database and fails with "schema ... does not exist"
// when another installation, or a parallel test, drops one meanwhile.

describe.skipIf(postgresProblem)('migrations beside other schemas on PostgreSQL', () => {
  const schemas: string[] = [];
  const newSchema = async () => {
    const name = `sl_introspect_${randomBytes(5).toString('hex')}`;
    schemas.push(name);
    await asPostgresAdmin(`create schema ${name}`);
    return name;
  };
  afterAll(async () => {
    for (const name of schemas) await asPostgresAdmin(`drop schema if exists ${name} cascade`);
  });

  it('sees only its own schema, and migrates while other schemas are dropped', async () => {
    const other = await newSchema();
    await asPostgresAdmin(`create table ${other}.events (id text)`);
    const own = await newSchema();
    const db = createDatabase(POSTGRES_URL, { pgSchema: own, pgPoolSize: 2 });
    try {
      expect(await db.kysely.introspection.getTables()).toEqual([]);
      // Schemas full of tables are dropped again and again while the migrations run.
      let migrating = true;
      const churn = (async () => {
        let rounds = 0;
        while (migrating || rounds < 3) {
          const name = await newSchema();
          await asPostgresAdmin(`create table ${name}.a (id serial primary key, x text); create table ${name}.b (id serial primary key)`);
          await asPostgresAdmin(`drop schema ${name} cascade`);
          rounds += 1;
        }
        return rounds;
      })();
      const applied = await migrateToLatest(db).finally(() => (migrating = false));
      expect(await churn).toBeGreaterThan(0);
      expect(applied.length).toBeGreaterThan(10);
      const tables = (await db.kysely.introspection.getTables()).map((table) => table.name);
      expect(tables).toContain('events');
      expect(tables).toContain('kysely_migration');
      expect((await db.kysely.introspection.getTables()).every((table) => table.schema === own)).toBe(true);
      expect(await db.kysely.introspection.getSchemas()).toEqual([{ name: own }]);
    } finally {
      await db.close();
    }
  });
});
