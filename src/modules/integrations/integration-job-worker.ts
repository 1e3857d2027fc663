import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { PaymentFold } from '../events/server-events.service.ts';
import type { Keyring } from '../../crypto/keyring.ts';
import type { Database } from '../../db/schema.ts';
import { retryDelay } from '../../mail/outbox-worker.ts';
import type { ApiAdapter } from './adapters/index.ts';
import { JobRunError, isPermanent, runHistoryJob } from './history-import.ts';
import type { JobRow } from './integrations.repository.ts';
import * as repo from './integrations.repository.ts';
import { claimNextJob, finishJob, releaseJob, retryLater } from './job-queue.ts';
import { LeasedJobWorker } from './leased-job-worker.ts';
import { RESYNC_JOB } from './providers.ts';

// Runs the integration jobs (history-import.ts) in the background of every instance, in the
// shape of the derived-data worker: woken when a job is queued, polling besides for the jobs
// other instances queued, retried or left behind, one job at a time. A job is leased
// (job-queue.ts), so any number of instances may run this on one database. A failed attempt is
// queued again after an exponential delay (30 s, 1 min, 2 min ... by default), kept in the job's
// row rather than in memory as p-retry would, so a restart or another instance takes it up; after
// the last attempt the job is failed with its error. A refused credential is not retried.

/** How often the table is looked at besides the wake-ups. */
const POLL_INTERVAL_MS = 5_000;
const MAX_RETRY_DELAY_MS = 60 * 60_000;
/**
 * How long a stop waits for the provider's answer under way. The adapters' calls cannot be
 * aborted and take up to 20 s to time out, longer than the drain after SIGTERM (server.ts): past
 * this, the job is handed back at once and the late answer finds the lease gone.
 */
const STOP_WAIT_MS = 3_000;

export interface IntegrationJobWorkerOptions {
  maxAttempts: number;
  retryBaseMs: number;
  leaseMs: number;
  /** Polls more often in tests. */
  pollIntervalMs?: number;
  stopWaitMs?: number;
}

export interface IntegrationJobDeps {
  db: Kysely<Database>;
  keyring: Keyring;
  adapterOf(provider: string): ApiAdapter | null;
  log: FastifyBaseLogger;
  /** Counts the payments each page handed to the payment writer (GET /metrics). */
  onPage?(provider: string, payments: number): void;
  /** Where imported payments are counted (the rollup deriver; null: at once, under the website's lock). */
  paymentFold?: PaymentFold | null;
}

export class IntegrationJobWorker extends LeasedJobWorker {
  /** Wake-ups at the retry times of this worker's failed attempts, sooner than the next poll. */
  private readonly retryTimers = new Set<NodeJS.Timeout>();
  /** The job under way, to hand back when a stop cannot wait for it. */
  private current: JobRow | null = null;

  constructor(
    private readonly deps: IntegrationJobDeps,
    private readonly options: IntegrationJobWorkerOptions,
  ) {
    super(deps.log, 'integration jobs', options.leaseMs, options.pollIntervalMs ?? POLL_INTERVAL_MS);
  }

  /**
   * Stops after the page under way and hands its job back; what is left goes on at the next
   * start, here or elsewhere. A page whose answer is slow is not waited for past STOP_WAIT_MS.
   */
  override async stop(): Promise<void> {
    this.loop.halt();
    for (const timer of this.retryTimers) clearTimeout(timer);
    this.retryTimers.clear();
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), this.options.stopWaitMs ?? STOP_WAIT_MS)));
    const ended = await Promise.race([this.idle().then(() => 'ended' as const), waited]);
    clearTimeout(timer);
    const job = this.current;
    if (ended === 'late' && job) {
      await releaseJob(this.deps.db, job, this.lease).catch((error: unknown) => this.failed(error));
      this.deps.log.info({ jobId: job.id, provider: job.provider }, 'integration job: handed back at stop, its page still waiting for the provider');
    }
  }

  protected async runAll(): Promise<void> {
    while (!this.loop.isStopped) {
      const job = await claimNextJob(this.deps.db, RESYNC_JOB, new Date().toISOString(), this.lease);
      if (!job) return;
      this.current = job;
      try {
        await this.run(job);
      } finally {
        this.current = null;
      }
    }
  }

  private async run(job: JobRow): Promise<void> {
    const { db, log } = this.deps;
    const context = { ...this.deps, lease: this.lease, stopping: () => this.loop.isStopped };
    try {
      const end = await runHistoryJob(context, job);
      if (end === 'stopped') await releaseJob(db, job, this.lease);
      else if (end === 'done') log.info({ jobId: job.id, provider: job.provider }, 'integration job: payment history imported');
    } catch (error) {
      if (!(error instanceof JobRunError)) throw error;
      await this.attemptFailed(job, error);
    }
  }

  private async attemptFailed(job: JobRow, error: JobRunError): Promise<void> {
    const { db, log } = this.deps;
    const at = new Date().toISOString();
    const last = isPermanent(error.original) || job.attempts >= this.options.maxAttempts;
    // The message is the provider's answer, scrubbed of the credential (history-import.ts).
    log.warn({ jobId: job.id, provider: job.provider, attempt: job.attempts, error: error.description }, last ? 'integration job: failed' : 'integration job: attempt failed; retrying later');
    if (!last) {
      const delayMs = retryDelay(job.attempts, { retryDelayMs: this.options.retryBaseMs, maxRetryDelayMs: MAX_RETRY_DELAY_MS });
      await retryLater(db, job, this.lease, error.description, at, delayMs);
      this.wakeAfter(delayMs);
      return;
    }
    // The connection's status says why it cannot be used, when the credential never got an answer.
    if (!error.verified && error.connectedAt !== null) {
      await repo.recordVerification(db, job.website_id, job.provider, error.connectedAt, { error: error.description }, at);
    }
    await finishJob(db, job.id, { status: 'failed', error: error.description }, at, this.lease);
  }

  private wakeAfter(ms: number): void {
    const timer = setTimeout(() => {
      this.retryTimers.delete(timer);
      this.wake();
    }, ms);
    timer.unref();
    this.retryTimers.add(timer);
  }
}
