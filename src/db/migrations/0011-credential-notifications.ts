import { type Kysely, sql } from 'kysely';
import { CREDENTIALS_CHANNEL } from '../credential-tables.ts';
import type { Engine } from '../database.ts';

/**
 * PostgreSQL: a change to a credential table (src/db/credential-tables.ts) notifies every
 * listening instance at commit, whoever made it (another instance, the CLI, an operator's SQL,
 * a cascade), so their caches of principals forget what they held. Marking a credential as used
 * (last_used_at, last_seen_at) is not a change. SQLite needs nothing: one file, whose
 * data_version another process's commit moves.
 */
const WATCHED: [table: string, columns: string[]][] = [
  ['access_tokens', ['id', 'account_id', 'digest', 'permissions', 'website_ids', 'expires_at', 'revoked_at']],
  ['api_keys', ['id', 'website_id', 'digest', 'revoked_at']],
  ['dashboard_sessions', ['id', 'account_id', 'digest', 'signed_in_at', 'expires_at', 'revoked_at']],
  ['website_members', ['website_id', 'account_id', 'role']],
];

export function credentialNotifications(engine: Engine) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (engine !== 'postgres') return;
      await sql`CREATE FUNCTION credentials_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          PERFORM pg_notify(${sql.lit(CREDENTIALS_CHANNEL)}, TG_TABLE_SCHEMA);
          RETURN NULL;
        END $$`.execute(db);
      for (const [table, columns] of WATCHED) {
        await sql`CREATE TRIGGER ${sql.id(`${table}_changed`)}
          AFTER INSERT OR DELETE OR TRUNCATE OR UPDATE OF ${sql.join(columns.map((c) => sql.id(c)))} ON ${sql.table(table)}
          FOR EACH STATEMENT EXECUTE FUNCTION credentials_changed()`.execute(db);
      }
    },
    async down(db: Kysely<unknown>): Promise<void> {
      if (engine !== 'postgres') return;
      for (const [table] of WATCHED) await sql`DROP TRIGGER ${sql.id(`${table}_changed`)} ON ${sql.table(table)}`.execute(db);
      await sql`DROP FUNCTION credentials_changed()`.execute(db);
    },
  };
}
