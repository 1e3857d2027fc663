import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Database, IntegrationJobsTable, IntegrationsTable } from '../../db/schema.ts';

export type IntegrationRow = Selectable<IntegrationsTable>;
/** A connection as connect writes it: the webhook's secret and counters are left as they are. */
export type NewIntegration = Omit<Insertable<IntegrationsTable>, `webhook${string}` | `last_webhook_${string}`>;
export type JobRow = Selectable<IntegrationJobsTable>;

export async function listIntegrations(db: Kysely<Database>, websiteId: string) {
  return db
    .selectFrom('integrations')
    .select([
      'provider',
      'connected_at',
      'account_name',
      'account_currency',
      'verified_at',
      'verification_error',
      'webhook_secret_set_at',
      'last_webhook_at',
      'last_webhook_type',
      'webhooks_received',
    ])
    .where('website_id', '=', websiteId)
    .execute();
}

/** The whole row, sealed credentials included: for the job that talks to the provider only. */
export async function findIntegrationRow(db: Kysely<Database>, websiteId: string, provider: string): Promise<IntegrationRow | undefined> {
  return db.selectFrom('integrations').selectAll().where('website_id', '=', websiteId).where('provider', '=', provider).executeTakeFirst();
}

export type Verification = { accountName: string | null; currency: string | null } | { error: string };

/**
 * What the provider answered for the credential connected at `connectedAt`: a credential replaced
 * meanwhile is left for its own check.
 */
export async function recordVerification(db: Kysely<Database>, websiteId: string, provider: string, connectedAt: string, outcome: Verification, at: string) {
  const values =
    'error' in outcome
      ? { account_name: null, account_currency: null, verified_at: null, verification_error: outcome.error }
      : { account_name: outcome.accountName, account_currency: outcome.currency, verified_at: at, verification_error: null };
  await db
    .updateTable('integrations')
    .set(values)
    .where('website_id', '=', websiteId)
    .where('provider', '=', provider)
    .where('connected_at', '=', connectedAt)
    .execute();
}

export async function findWebsiteCurrency(db: Kysely<Database>, websiteId: string): Promise<string> {
  const row = await db.selectFrom('websites').select('currency').where('id', '=', websiteId).executeTakeFirstOrThrow();
  return row.currency;
}

export async function findIntegration(db: Kysely<Database>, websiteId: string, provider: string) {
  return db
    .selectFrom('integrations')
    .select(['connected_at'])
    .where('website_id', '=', websiteId)
    .where('provider', '=', provider)
    .executeTakeFirst();
}

/** One stored ciphertext per key id, for the start-up check that every key is present. */
export async function sampleCiphertextPerKey(db: Kysely<Database>): Promise<IntegrationRow[]> {
  const keyIds = await db.selectFrom('integrations').select('key_id').distinct().execute();
  const rows: IntegrationRow[] = [];
  for (const { key_id } of keyIds) {
    rows.push(await db.selectFrom('integrations').selectAll().where('key_id', '=', key_id).limit(1).executeTakeFirstOrThrow());
  }
  return rows;
}

/** The same for the webhook signing secrets, sealed under their own key ids. */
export async function sampleWebhookSecretPerKey(db: Kysely<Database>): Promise<IntegrationRow[]> {
  const keyIds = await db.selectFrom('integrations').select('webhook_key_id').where('webhook_key_id', 'is not', null).distinct().execute();
  const rows: IntegrationRow[] = [];
  for (const { webhook_key_id } of keyIds) {
    rows.push(await db.selectFrom('integrations').selectAll().where('webhook_key_id', '=', webhook_key_id).limit(1).executeTakeFirstOrThrow());
  }
  return rows;
}

export async function upsertIntegration(db: Kysely<Database>, row: NewIntegration): Promise<void> {
  await db
    .insertInto('integrations')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['website_id', 'provider']).doUpdateSet({
        key_id: row.key_id,
        ciphertext: row.ciphertext,
        connected_at: row.connected_at,
        updated_at: row.updated_at,
        // New credentials are checked anew.
        account_name: null,
        account_currency: null,
        verified_at: null,
        verification_error: null,
      }),
    )
    .execute();
}

export async function deleteIntegration(db: Kysely<Database>, websiteId: string, provider: string): Promise<boolean> {
  const result = await db.deleteFrom('integrations').where('website_id', '=', websiteId).where('provider', '=', provider).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function latestJob(db: Kysely<Database>, websiteId: string, provider: string, kind: string): Promise<JobRow | undefined> {
  return db
    .selectFrom('integration_jobs')
    .selectAll()
    .where('website_id', '=', websiteId)
    .where('provider', '=', provider)
    .where('kind', '=', kind)
    .orderBy('requested_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export async function insertJob(db: Kysely<Database>, row: JobRow): Promise<void> {
  await db.insertInto('integration_jobs').values(row).execute();
}

/** Queued or running jobs end when their integration is disconnected (or, running, when its credentials are replaced). */
export async function cancelOpenJobs(
  db: Kysely<Database>,
  websiteId: string,
  provider: string,
  at: string,
  reason = 'cancelled: the integration was disconnected',
  statuses: readonly string[] = ['queued', 'running'],
): Promise<void> {
  await db
    .updateTable('integration_jobs')
    .set({ status: 'failed', error: reason, finished_at: at, lease_owner: null, locked_until: null })
    .where('website_id', '=', websiteId)
    .where('provider', '=', provider)
    .where('status', 'in', [...statuses])
    .execute();
}

// Claiming, progress and the end of a job: the worker's side of the queue.
export { claimNextJob, finishJob } from './job-queue.ts';
