import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { describeFault } from '../../db/faults.ts';
import { WakeLoop } from '../../lib/wake-loop.ts';
import type { Lease } from './job-queue.ts';

// The skeleton every runner of integration_jobs rows shares (the payment-history jobs,
// integration-job-worker.ts; the imports' jobs, ../imports/import-job-worker.ts): woken when a job
// is queued, polling besides for the jobs other instances queued, retried or left behind, one job
// at a time under a lease of its own name (job-queue.ts), and one log line when the database stops
// and starts answering again. A subclass says which jobs it claims and how it runs them.

export abstract class LeasedJobWorker {
  /** This worker's name in the leases it holds. */
  readonly id = randomUUID();
  protected readonly loop: WakeLoop;
  private failing = false;

  constructor(
    protected readonly logger: FastifyBaseLogger,
    /** How its log lines name its jobs ("integration jobs", "import jobs"). */
    private readonly label: string,
    private readonly leaseMs: number,
    pollIntervalMs: number,
  ) {
    this.loop = new WakeLoop(
      () =>
        this.runAll().then(
          () => this.recovered(),
          (error: unknown) => this.failed(error),
        ),
      pollIntervalMs,
    );
  }

  /** Claims and runs jobs until none is due or the worker stops. */
  protected abstract runAll(): Promise<void>;

  protected get lease(): Lease {
    return { owner: this.id, ms: this.leaseMs };
  }

  /** Starts watching (again, after a stop); does nothing while it already watches. */
  start(): void {
    this.loop.start();
  }

  /** A job was queued (or may have been): run it now. */
  wake(): void {
    this.loop.wake();
  }

  /** Resolves once the run under way (if any) has ended. */
  idle(): Promise<void> {
    return this.loop.idle();
  }

  /** Stops after the chunk under way; what is left goes on at the next start, here or elsewhere. */
  async stop(): Promise<void> {
    this.loop.halt();
    await this.idle();
  }

  private recovered(): void {
    if (this.failing) this.logger.info(`${this.label}: running again`);
    this.failing = false;
  }

  /** The leases run out by themselves; the poll tries again. */
  protected failed(error: unknown): void {
    if (!this.failing) this.logger.warn({ fault: describeFault(error) }, `${this.label}: cannot run jobs now; retrying`);
    this.failing = true;
  }
}
