import type { Kysely } from 'kysely';
import type { Keyring } from '../../crypto/keyring.ts';
import { lockWebsite } from '../../db/locks.ts';
import type { Database } from '../../db/schema.ts';
import { badRequest } from '../../errors.ts';
import { sealCredentials } from './credentials.ts';
import { presentJob, presentStatus } from './integrations.presenter.ts';
import * as repo from './integrations.repository.ts';
import { newJob } from './job-queue.ts';
import { API_PROVIDERS, type Provider, RESYNC_JOB, RESYNC_PROVIDER, isApiProvider, webhookUrl } from './providers.ts';

/** The provider's job of the current connection, if any. */
async function currentJob(db: Kysely<Database>, websiteId: string, provider: Provider, connectedAt: string | undefined) {
  if (!connectedAt) return undefined;
  const job = await repo.latestJob(db, websiteId, provider, RESYNC_JOB);
  if (!job) return undefined;
  // Disconnecting ends every open job, so an open job belongs to the current connection even
  // when the credentials were replaced after it was queued. A finished job from before the
  // current connection belongs to an older one.
  if (job.status === 'queued' || job.status === 'running') return job;
  return job.requested_at >= connectedAt ? job : undefined;
}

/** Each provider's connection, check, history import and webhook; `publicUrl` is where providers reach this server. */
export async function getStatus(db: Kysely<Database>, websiteId: string, publicUrl: string) {
  const rows = await repo.listIntegrations(db, websiteId);
  const connectedAt = new Map(rows.map((r) => [r.provider, r.connected_at]));
  const jobs = new Map<string, repo.JobRow | undefined>();
  for (const provider of API_PROVIDERS) jobs.set(provider, await currentJob(db, websiteId, provider, connectedAt.get(provider)));
  return presentStatus(rows, jobs, await repo.findWebsiteCurrency(db, websiteId), (provider) => webhookUrl(publicUrl, websiteId, provider));
}

/** A connection made at `at` with these credentials, sealed; its check is still to come. */
export function newConnection(keyring: Keyring, websiteId: string, provider: Provider, fields: Record<string, string>, at: string): repo.NewIntegration {
  const sealed = sealCredentials(keyring, websiteId, provider, fields);
  return {
    website_id: websiteId,
    provider,
    key_id: sealed.keyId,
    ciphertext: sealed.ciphertext,
    connected_at: at,
    updated_at: at,
    account_name: null,
    account_currency: null,
    verified_at: null,
    verification_error: null,
  };
}

/**
 * Connecting again replaces the stored credentials. An API provider's credential is then checked
 * and its payment history imported by a job (integration-job-worker.ts): the answer does not wait
 * for the provider.
 */
export async function connect(
  db: Kysely<Database>,
  keyring: Keyring,
  websiteId: string,
  provider: Provider,
  fields: Record<string, string>,
) {
  const now = new Date().toISOString();
  await db.transaction().execute(async (trx) => {
    // Serialised with queueResync and disconnect, so one job at a time per connection.
    await lockWebsite(trx, websiteId);
    await repo.upsertIntegration(trx, newConnection(keyring, websiteId, provider, fields, now));
    if (!isApiProvider(provider)) return;
    // A queued job reads the credentials when it runs, so it checks the new ones; a running one
    // holds the old ones and is replaced.
    await repo.cancelOpenJobs(trx, websiteId, provider, now, 'cancelled: the credentials were replaced', ['running']);
    const open = await repo.latestJob(trx, websiteId, provider, RESYNC_JOB);
    if (open?.status !== 'queued') await repo.insertJob(trx, newJob(websiteId, provider, RESYNC_JOB, now));
  });
  const currency = await repo.findWebsiteCurrency(db, websiteId);
  return { message: `${provider} connected`, provider, connected: true, connectedAt: now, currency };
}

/** Idempotent: disconnecting what is not connected answers disconnected: false. */
export async function disconnect(db: Kysely<Database>, websiteId: string, provider: Provider) {
  return db.transaction().execute(async (trx) => {
    // Serialised with queueResync, so a re-sync cannot be queued for a connection being removed.
    await lockWebsite(trx, websiteId);
    const disconnected = await repo.deleteIntegration(trx, websiteId, provider);
    if (disconnected) await repo.cancelOpenJobs(trx, websiteId, provider, new Date().toISOString());
    return { message: disconnected ? `${provider} disconnected` : `${provider} was not connected`, disconnected };
  });
}

/** Queues a re-sync of historical payments; one open job at a time per website and provider. */
export async function queueResync(db: Kysely<Database>, websiteId: string, provider: Provider = RESYNC_PROVIDER) {
  return db.transaction().execute(async (trx) => {
    // Check-then-insert: one request at a time per website (see db/locks.ts).
    await lockWebsite(trx, websiteId);
    const integration = await repo.findIntegration(trx, websiteId, provider);
    if (!integration) throw badRequest(`${provider} is not connected; connect it before asking for a re-sync`);
    const open = await currentJob(trx, websiteId, provider, integration.connected_at);
    if (open && (open.status === 'queued' || open.status === 'running')) {
      return { message: `A re-sync is already ${open.status}`, resync: presentJob(open) };
    }
    const job = newJob(websiteId, provider, RESYNC_JOB, new Date().toISOString());
    await repo.insertJob(trx, job);
    return { message: 'Re-sync of historical payments queued', resync: presentJob(job) };
  });
}
