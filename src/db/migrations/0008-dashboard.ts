import { type Kysely, sql } from 'kysely';
import type { Engine } from '../database.ts';
import { columnTypes } from './column-types.ts';

/**
 * The dashboard: passwords on accounts, server-side sessions, one-time password-reset links and
 * invitation links (only digests stored), and account mail (a password reset belongs to no
 * website, so `mail_outbox.website_id` becomes optional).
 */
export function dashboard(engine: Engine) {
  const t = columnTypes(engine);
  const accountRef = (c: any) => c.notNull().references('accounts.id').onDelete('cascade'); // eslint-disable-line @typescript-eslint/no-explicit-any
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('accounts').addColumn('password_hash', 'text').execute();

      await db.schema
        .createTable('dashboard_sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', accountRef)
        .addColumn('digest', 'text', (c) => c.notNull().unique())
        .addColumn('user_agent', 'text')
        .addColumn('created_at', t.timestamp, (c) => c.notNull())
        .addColumn('signed_in_at', t.timestamp, (c) => c.notNull())
        .addColumn('last_seen_at', t.timestamp, (c) => c.notNull())
        .addColumn('expires_at', t.timestamp, (c) => c.notNull())
        .addColumn('revoked_at', t.timestamp)
        .execute();
      await db.schema.createIndex('dashboard_sessions_account_idx').on('dashboard_sessions').column('account_id').execute();

      await db.schema
        .createTable('password_resets')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', accountRef)
        .addColumn('digest', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', t.timestamp, (c) => c.notNull())
        .addColumn('expires_at', t.timestamp, (c) => c.notNull())
        .addColumn('used_at', t.timestamp)
        .execute();
      await db.schema.createIndex('password_resets_account_idx').on('password_resets').column('account_id').execute();

      await db.schema.alterTable('invitations').addColumn('link_digest', 'text').execute();
      await db.schema.alterTable('invitations').addColumn('link_expires_at', t.timestamp).execute();
      await db.schema.createIndex('invitations_link_digest_idx').on('invitations').column('link_digest').unique().execute();

      if (engine === 'postgres') {
        await sql`ALTER TABLE mail_outbox ALTER COLUMN website_id DROP NOT NULL`.execute(db);
      } else {
        // SQLite cannot drop a NOT NULL: the (small) outbox table is rebuilt.
        await sql`CREATE TABLE mail_outbox_rebuilt (
          id text PRIMARY KEY,
          website_id text REFERENCES websites(id) ON DELETE CASCADE,
          alert_history_id text,
          to_address text NOT NULL,
          subject text NOT NULL,
          text text NOT NULL,
          status text NOT NULL,
          attempts integer NOT NULL DEFAULT 0,
          next_attempt_at text NOT NULL,
          last_error text,
          created_at text NOT NULL,
          sent_at text
        )`.execute(db);
        await sql`INSERT INTO mail_outbox_rebuilt SELECT id, website_id, alert_history_id, to_address, subject, text, status, attempts, next_attempt_at, last_error, created_at, sent_at FROM mail_outbox`.execute(db);
        await sql`DROP TABLE mail_outbox`.execute(db);
        await sql`ALTER TABLE mail_outbox_rebuilt RENAME TO mail_outbox`.execute(db);
        await db.schema.createIndex('mail_outbox_due_idx').on('mail_outbox').columns(['status', 'next_attempt_at']).execute();
      }
      // Account mail (password resets) is deleted with its account.
      await db.schema.alterTable('mail_outbox').addColumn('account_id', 'text', (c) => c.references('accounts.id').onDelete('cascade')).execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('mail_outbox').dropColumn('account_id').execute();
      await db.schema.dropIndex('invitations_link_digest_idx').execute();
      await db.schema.alterTable('invitations').dropColumn('link_expires_at').execute();
      await db.schema.alterTable('invitations').dropColumn('link_digest').execute();
      await db.schema.dropTable('password_resets').execute();
      await db.schema.dropTable('dashboard_sessions').execute();
      await db.schema.alterTable('accounts').dropColumn('password_hash').execute();
    },
  };
}
