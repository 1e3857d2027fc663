import type { ExpressionBuilder, Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { newId } from '../../lib/ids.ts';
import type { JobRow } from './integrations.repository.ts';

// The integration_jobs table as a queue shared by every instance. A worker claims a job with a
// lease: a conditional UPDATE that only one of several racing workers can win, on both engines
// (PostgreSQL re-checks the WHERE of a waiting UPDATE against the row the winner committed;
// SQLite runs one write at a time). The lease is renewed after every page, so a job whose
// instance died is taken again once `locked_until` has passed. Every write of a running job's
// worker names its lease, so a worker that lost the job (it was cancelled, or taken over after
// the lease ran out) learns it and stops.

export interface Lease {
  /** The worker's id: one per worker instance. */
  owner: string;
  ms: number;
}

/** Short enough for the tests that call claimNextJob as a worker would; the worker passes its own. */
const DEFAULT_LEASE: Lease = { owner: 'unnamed-worker', ms: 120_000 };

const later = (at: string, ms: number) => new Date(Date.parse(at) + ms).toISOString();

/** A running job whose lease has run out, or that has none (claimed before leases, by 0024's code). */
const leaseOver = (eb: ExpressionBuilder<Database, 'integration_jobs'>, at: string) =>
  eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', at)]);

/**
 * Claims the oldest job of `kinds` that is due: queued and past its retry time, or running under
 * a lease that has run out. Counts the attempt.
 */
export async function claimNextJob(
  db: Kysely<Database>,
  kinds: string | readonly string[],
  at: string,
  lease: Lease = DEFAULT_LEASE,
): Promise<JobRow | undefined> {
  const kindList = typeof kinds === 'string' ? [kinds] : [...kinds];
  for (;;) {
    const next = await db
      .selectFrom('integration_jobs')
      .selectAll()
      .where('kind', 'in', kindList)
      .where((eb) =>
        eb.or([
          eb.and([eb('status', '=', 'queued'), eb.or([eb('run_after', 'is', null), eb('run_after', '<=', at)])]),
          eb.and([eb('status', '=', 'running'), leaseOver(eb, at)]),
        ]),
      )
      .orderBy('requested_at')
      .orderBy('id')
      .limit(1)
      .executeTakeFirst();
    if (!next) return undefined;
    const claim = { status: 'running', started_at: at, attempts: next.attempts + 1, lease_owner: lease.owner, locked_until: later(at, lease.ms) };
    const claimed = await db
      .updateTable('integration_jobs')
      .set(claim)
      .where('id', '=', next.id)
      .where((eb) =>
        next.status === 'queued'
          ? eb('status', '=', 'queued')
          : eb.and([eb('status', '=', 'running'), leaseOver(eb, at)]),
      )
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) > 0) return { ...next, ...claim };
  }
}

/**
 * After a page is recorded: where the next one starts, the progress, and a fresh lease; after the
 * last page (no cursor), the job's success. False when the lease was lost.
 */
export async function commitPage(
  db: Kysely<Database>,
  job: JobRow,
  lease: Lease,
  page: { cursor: string | null; payments: number },
  at: string,
): Promise<boolean> {
  const result = await db
    .updateTable('integration_jobs')
    .set((eb) => ({
      cursor: page.cursor,
      pages_done: eb('pages_done', '+', 1),
      payments_imported: eb('payments_imported', '+', page.payments),
      ...(page.cursor === null
        ? { status: 'succeeded', error: null, finished_at: at, lease_owner: null, locked_until: null }
        : { locked_until: later(at, lease.ms) }),
    }))
    .where('id', '=', job.id)
    .where('status', '=', 'running')
    .where('lease_owner', '=', lease.owner)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** A failed attempt: queued again after `delayMs`, with the error shown meanwhile; its cursor is kept. */
export async function retryLater(db: Kysely<Database>, job: JobRow, lease: Lease, error: string, at: string, delayMs: number): Promise<void> {
  await db
    .updateTable('integration_jobs')
    .set({ status: 'queued', error, run_after: later(at, delayMs), lease_owner: null, locked_until: null })
    .where('id', '=', job.id)
    .where('status', '=', 'running')
    .where('lease_owner', '=', lease.owner)
    .execute();
}

/** A worker that stops hands its job back at once, the attempt uncounted, for the next instance to go on from its cursor. */
export async function releaseJob(db: Kysely<Database>, job: JobRow, lease: Lease): Promise<void> {
  await db
    .updateTable('integration_jobs')
    .set((eb) => ({ status: 'queued', attempts: eb('attempts', '-', 1), lease_owner: null, locked_until: null }))
    .where('id', '=', job.id)
    .where('status', '=', 'running')
    .where('lease_owner', '=', lease.owner)
    .execute();
}

/** Ends a job. With a lease, only while the job is still that worker's. */
export async function finishJob(
  db: Kysely<Database>,
  id: string,
  outcome: { status: 'succeeded' | 'failed'; error?: string },
  at: string,
  lease?: Lease,
): Promise<void> {
  let update = db
    .updateTable('integration_jobs')
    .set({ status: outcome.status, error: outcome.error ?? null, finished_at: at, lease_owner: null, locked_until: null })
    .where('id', '=', id);
  if (lease) update = update.where('status', '=', 'running').where('lease_owner', '=', lease.owner);
  await update.execute();
}

/** A queued job of `kind` for the website, not yet attempted: the row every producer of jobs inserts. */
export function newJob(websiteId: string, provider: string, kind: string, at: string): JobRow {
  return {
    id: newId(),
    website_id: websiteId,
    provider,
    kind,
    status: 'queued',
    attempts: 0,
    error: null,
    requested_at: at,
    started_at: null,
    finished_at: null,
    lease_owner: null,
    locked_until: null,
    run_after: null,
    cursor: null,
    pages_done: 0,
    payments_imported: 0,
  };
}
