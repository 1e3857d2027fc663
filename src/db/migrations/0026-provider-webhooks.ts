import type { Kysely } from 'kysely';
import { profileEmailOf } from '../../lib/profile-email.ts';
import type { Engine } from '../database.ts';
import { columnTypes } from './column-types.ts';

const BACKFILL_BATCH = 1000;

/**
 * Payment providers' webhooks (issue 34). An integration keeps the webhook signing secret its owner
 * pasted (sealed like the credentials, under its own key id) and what was last received; each
 * verified delivery is remembered by the provider's event id, so a redelivery records nothing.
 * A visitor profile keeps the e-mail address it names (its user_id or its `email` field), so a
 * payment that carries no visitor id is attributed to the profile with the customer's address.
 */
export function providerWebhooks(engine: Engine) {
  const { timestamp } = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const integrations = db.schema.alterTable('integrations');
      await integrations.addColumn('webhook_key_id', 'text').execute();
      await integrations.addColumn('webhook_ciphertext', 'text').execute();
      await integrations.addColumn('webhook_secret_set_at', timestamp).execute();
      await integrations.addColumn('last_webhook_at', timestamp).execute();
      await integrations.addColumn('last_webhook_type', 'text').execute();
      await integrations.addColumn('webhooks_received', 'integer', (c) => c.notNull().defaultTo(0)).execute();

      await db.schema
        .createTable('integration_webhook_events')
        .addColumn('website_id', 'text', (c) => c.notNull().references('websites.id').onDelete('cascade'))
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('event_id', 'text', (c) => c.notNull())
        .addColumn('event_type', 'text', (c) => c.notNull())
        .addColumn('payments', 'integer', (c) => c.notNull())
        .addColumn('received_at', timestamp, (c) => c.notNull())
        .addPrimaryKeyConstraint('integration_webhook_events_pk', ['website_id', 'provider', 'event_id'])
        .execute();
      await db.schema
        .createIndex('integration_webhook_events_age_idx')
        .on('integration_webhook_events')
        .columns(['website_id', 'provider', 'received_at'])
        .execute();

      await db.schema.alterTable('visitor_profiles').addColumn('email', 'text').execute();
      await db.schema.createIndex('visitor_profiles_email_idx').on('visitor_profiles').columns(['website_id', 'email']).execute();
      await backfillProfileEmails(db);
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('visitor_profiles_email_idx').execute();
      await db.schema.alterTable('visitor_profiles').dropColumn('email').execute();
      await db.schema.dropTable('integration_webhook_events').execute();
      for (const column of ['webhooks_received', 'last_webhook_type', 'last_webhook_at', 'webhook_secret_set_at', 'webhook_ciphertext', 'webhook_key_id']) {
        await db.schema.alterTable('integrations').dropColumn(column).execute();
      }
    },
  };
}

interface ProfileKeys {
  website_id: string;
  visitor_id: string;
  user_id: string;
  metadata: string | Record<string, unknown> | null;
}

/** Existing profiles, in batches of their primary key: profiles are one row per identified visitor. */
async function backfillProfileEmails(db: Kysely<unknown>): Promise<void> {
  const table = db as unknown as Kysely<{ visitor_profiles: ProfileKeys & { email: string | null } }>;
  let after: { website_id: string; visitor_id: string } | null = null;
  for (;;) {
    let query = table.selectFrom('visitor_profiles').select(['website_id', 'visitor_id', 'user_id', 'metadata']);
    if (after) {
      const { website_id, visitor_id } = after;
      query = query.where((eb) => eb.or([eb('website_id', '>', website_id), eb.and([eb('website_id', '=', website_id), eb('visitor_id', '>', visitor_id)])]));
    }
    const rows = await query.orderBy('website_id').orderBy('visitor_id').limit(BACKFILL_BATCH).execute();
    for (const row of rows) {
      const metadata = typeof row.metadata === 'string' ? (JSON.parse(row.metadata) as Record<string, unknown>) : row.metadata;
      const email = profileEmailOf(row.user_id, metadata);
      if (email === null) continue;
      await table.updateTable('visitor_profiles').set({ email }).where('website_id', '=', row.website_id).where('visitor_id', '=', row.visitor_id).execute();
    }
    if (rows.length < BACKFILL_BATCH) return;
    const last = rows[rows.length - 1]!;
    after = { website_id: last.website_id, visitor_id: last.visitor_id };
  }
}
