import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { describeFault } from '../../db/faults.ts';
import type { Database } from '../../db/schema.ts';
import { retryDelay } from '../../mail/outbox-worker.ts';
import type { JobRow } from '../integrations/integrations.repository.ts';
import { claimNextJob, finishJob, releaseJob, retryLater } from '../integrations/job-queue.ts';
import { LeasedJobWorker } from '../integrations/leased-job-worker.ts';
import type { EventStore } from '../stats/event-store.ts';
import type { Keyring } from '../../crypto/keyring.ts';
import { ImportFileError, type ImportRunContext, type RunEnd, failImport, runDeleteJob, runImportJob } from './import-job.ts';
import { IMPORT_DELETE_JOB, IMPORT_JOB, SIGHTLINE_DELETE_JOB, SIGHTLINE_IMPORT_JOB, UMAMI_SOURCE } from './imports.repository.ts';
import { runSightlineDeleteJob } from './sightline-import-delete.ts';
import { type ImportEventHooks, NO_EVENT_HOOKS, runSightlineImportJob } from './sightline-import-job.ts';
import { runUmamiImportJob } from './umami-job.ts';
import { UmamiSourceError } from './umami-source.ts';

// Runs the imports' jobs (import-job.ts) in the background of every instance, on the machinery of
// the integration jobs: the jobs are integration_jobs rows of their own kinds, leased by
// job-queue.ts, so any number of instances may run this on one database and a job whose instance
// died is taken again from its cursor once its lease runs out. A database fault is retried after a
// growing delay; an upload that cannot be read fails its import at once, with the reason.

const POLL_INTERVAL_MS = 5_000;
const MAX_RETRY_DELAY_MS = 60 * 60_000;

export interface ImportJobWorkerOptions {
  maxAttempts: number;
  retryBaseMs: number;
  leaseMs: number;
  pollIntervalMs?: number;
  chunkRows?: number;
  /** Hosts an Umami import may connect to (IMPORT_UMAMI_HOSTS). */
  umamiHosts: readonly string[];
  /** Days of Umami read per chunk. */
  umamiChunkDays: number;
}

export interface ImportJobDeps {
  db: Kysely<Database>;
  store: EventStore;
  log: FastifyBaseLogger;
  keyring: Keyring;
  /** Where imported raw events go and the fold they feed (Sightline's own export). */
  events?: ImportEventHooks;
}

export class ImportJobWorker extends LeasedJobWorker {
  constructor(
    private readonly deps: ImportJobDeps,
    private readonly options: ImportJobWorkerOptions,
  ) {
    super(deps.log, 'import jobs', options.leaseMs, options.pollIntervalMs ?? POLL_INTERVAL_MS);
  }

  protected async runAll(): Promise<void> {
    while (!this.loop.isStopped) {
      const job = await claimNextJob(this.deps.db, [IMPORT_JOB, IMPORT_DELETE_JOB, SIGHTLINE_IMPORT_JOB, SIGHTLINE_DELETE_JOB], new Date().toISOString(), this.lease);
      if (!job) return;
      await this.run(job);
    }
  }

  private runKind(job: JobRow, context: ImportRunContext): Promise<RunEnd> {
    const sightline = { ...context, events: this.deps.events ?? NO_EVENT_HOOKS };
    if (job.kind === SIGHTLINE_IMPORT_JOB) return runSightlineImportJob(sightline, job);
    if (job.kind === SIGHTLINE_DELETE_JOB) return runSightlineDeleteJob(sightline, job);
    return job.kind === IMPORT_DELETE_JOB ? runDeleteJob(context, job) : this.runImport(context, job);
  }

  private async run(job: JobRow): Promise<void> {
    const { db, log } = this.deps;
    const context = { db, store: this.deps.store, lease: this.lease, stopping: () => this.loop.isStopped, chunkRows: this.options.chunkRows };
    try {
      const end = await this.runKind(job, context);
      if (end === 'stopped') await releaseJob(db, job, this.lease);
      else if (end === 'done') log.info({ jobId: job.id, kind: job.kind }, 'import job: done');
    } catch (error) {
      const at = new Date().toISOString();
      if (error instanceof ImportFileError) {
        log.warn({ jobId: job.id, error: error.message }, 'import job: the source cannot be imported');
        await failImport(db, job.id, error.message);
        await finishJob(db, job.id, { status: 'failed', error: error.message }, at, this.lease);
        return;
      }
      // The Umami database unreachable or failing: tried again, then the import fails with the reason.
      const source = error instanceof UmamiSourceError ? error.message : null;
      const fault = source ?? describeFault(error);
      const description = source ? `${source}; retrying` : 'the database could not store the rows; retrying';
      if (job.attempts < this.options.maxAttempts) {
        log.warn({ jobId: job.id, attempt: job.attempts, fault }, 'import job: attempt failed; retrying later');
        const delayMs = retryDelay(job.attempts, { retryDelayMs: this.options.retryBaseMs, maxRetryDelayMs: MAX_RETRY_DELAY_MS });
        await retryLater(db, job, this.lease, description, at, delayMs);
        return;
      }
      log.warn({ jobId: job.id, fault }, 'import job: failed');
      if (job.kind === IMPORT_JOB || job.kind === SIGHTLINE_IMPORT_JOB) await failImport(db, job.id, source ?? 'the import could not be stored (database fault); delete it and import again');
      await finishJob(db, job.id, { status: 'failed', error: source ?? 'database fault' }, at, this.lease);
    }
  }

  /** A zip's import, or an Umami database's (its own reader). */
  private async runImport(context: Parameters<typeof runImportJob>[0], job: JobRow): Promise<RunEnd> {
    const imported = await this.deps.db.selectFrom('imports').selectAll().where('job_id', '=', job.id).executeTakeFirst();
    if (!imported || imported.status === 'deleting') return 'lost';
    if (imported.source !== UMAMI_SOURCE) return runImportJob(context, job);
    const umami = { ...context, keyring: this.deps.keyring, allowedHosts: this.options.umamiHosts, chunkDays: this.options.umamiChunkDays };
    return runUmamiImportJob(umami, job, imported);
  }
}
