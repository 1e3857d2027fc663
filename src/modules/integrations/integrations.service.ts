import type { Kysely } from 'kysely';
import type { Keyring } from '../../crypto/keyring.ts';
import { lockWebsite } from '../../db/locks.ts';
import type { Database } from '../../db/schema.ts';
import { badRequest } from '../../errors.ts';
import { newId } from '../../lib/ids.ts';
import { sealCredentials } from './credentials.ts';
import { presentJob, presentResync, presentStatus } from './integrations.presenter.ts';
import * as repo from './integrations.repository.ts';
import { type Provider, RESYNC_JOB, RESYNC_PROVIDER } from './providers.ts';

async function currentResync(db: Kysely<Database>, websiteId: string, connectedAt: string | undefined) {
  if (!connectedAt) return undefined;
  const job = await repo.latestJob(db, websiteId, RESYNC_PROVIDER, RESYNC_JOB);
  if (!job) return undefined;
  // Disconnecting ends every open job, so an open job belongs to the current connection even
  // when the credentials were replaced after it was queued. A finished job from before the
  // current connection belongs to an older one.
  if (job.status === 'queued' || job.status === 'running') return job;
  return job.requested_at >= connectedAt ? job : undefined;
}

export async function getStatus(db: Kysely<Database>, websiteId: string) {
  const rows = await repo.listIntegrations(db, websiteId);
  const connectedAt = new Map(rows.map((r) => [r.provider, r.connected_at]));
  const job = await currentResync(db, websiteId, connectedAt.get(RESYNC_PROVIDER));
  return presentStatus(connectedAt, presentResync(job), await repo.findWebsiteCurrency(db, websiteId));
}

/** Connecting again replaces the stored credentials. */
export async function connect(
  db: Kysely<Database>,
  keyring: Keyring,
  websiteId: string,
  provider: Provider,
  fields: Record<string, string>,
) {
  const sealed = sealCredentials(keyring, websiteId, provider, fields);
  const now = new Date().toISOString();
  await repo.upsertIntegration(db, {
    website_id: websiteId,
    provider,
    key_id: sealed.keyId,
    ciphertext: sealed.ciphertext,
    connected_at: now,
    updated_at: now,
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

/** Queues a re-sync of historical payments; one open job at a time per website. */
export async function queueResync(db: Kysely<Database>, websiteId: string) {
  return db.transaction().execute(async (trx) => {
    // Check-then-insert: one request at a time per website (see db/locks.ts).
    await lockWebsite(trx, websiteId);
    const integration = await repo.findIntegration(trx, websiteId, RESYNC_PROVIDER);
    if (!integration) throw badRequest(`${RESYNC_PROVIDER} is not connected; connect it before asking for a re-sync`);
    const open = await currentResync(trx, websiteId, integration.connected_at);
    if (open && (open.status === 'queued' || open.status === 'running')) {
      return { message: `A re-sync is already ${open.status}`, resync: presentJob(open) };
    }
    const job: repo.JobRow = {
      id: newId(),
      website_id: websiteId,
      provider: RESYNC_PROVIDER,
      kind: RESYNC_JOB,
      status: 'queued',
      attempts: 0,
      error: null,
      requested_at: new Date().toISOString(),
      started_at: null,
      finished_at: null,
    };
    await repo.insertJob(trx, job);
    return { message: 'Re-sync of historical payments queued', resync: presentJob(job) };
  });
}
