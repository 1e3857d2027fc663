import type { Kysely, Selectable } from 'kysely';
import type { Database, IntegrationJobsTable, IntegrationsTable } from '../../db/schema.ts';

export type IntegrationRow = Selectable<IntegrationsTable>;
export type JobRow = Selectable<IntegrationJobsTable>;

export async function listIntegrations(db: Kysely<Database>, websiteId: string) {
  return db.selectFrom('integrations').select(['provider', 'connected_at']).where('website_id', '=', websiteId).execute();
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

export async function upsertIntegration(db: Kysely<Database>, row: IntegrationRow): Promise<void> {
  await db
    .insertInto('integrations')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['website_id', 'provider']).doUpdateSet({
        key_id: row.key_id,
        ciphertext: row.ciphertext,
        connected_at: row.connected_at,
        updated_at: row.updated_at,
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

/** Queued or running jobs end when their integration is disconnected. */
export async function cancelOpenJobs(db: Kysely<Database>, websiteId: string, provider: string, at: string): Promise<void> {
  await db
    .updateTable('integration_jobs')
    .set({ status: 'failed', error: 'cancelled: the integration was disconnected', finished_at: at })
    .where('website_id', '=', websiteId)
    .where('provider', '=', provider)
    .where('status', 'in', ['queued', 'running'])
    .execute();
}

/**
 * Claims the oldest queued job of a kind for a worker: the conditional update makes the claim
 * safe when several workers race, on both engines.
 */
export async function claimNextJob(db: Kysely<Database>, kind: string, at: string): Promise<JobRow | undefined> {
  for (;;) {
    const next = await db
      .selectFrom('integration_jobs')
      .selectAll()
      .where('kind', '=', kind)
      .where('status', '=', 'queued')
      .orderBy('requested_at')
      .orderBy('id')
      .limit(1)
      .executeTakeFirst();
    if (!next) return undefined;
    const claimed = await db
      .updateTable('integration_jobs')
      .set({ status: 'running', started_at: at, attempts: next.attempts + 1 })
      .where('id', '=', next.id)
      .where('status', '=', 'queued')
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) > 0) return { ...next, status: 'running', started_at: at, attempts: next.attempts + 1 };
  }
}

export async function finishJob(db: Kysely<Database>, id: string, outcome: { status: 'succeeded' | 'failed'; error?: string }, at: string) {
  await db
    .updateTable('integration_jobs')
    .set({ status: outcome.status, error: outcome.error ?? null, finished_at: at })
    .where('id', '=', id)
    .execute();
}
