import type { Kysely } from 'kysely';
import type { Keyring } from '../../crypto/keyring.ts';
import type { Database } from '../../db/schema.ts';
import { AppError } from '../../errors.ts';
import { type PaymentFold, recordPayment } from '../events/server-events.service.ts';
import { type ApiAdapter, ProviderError, toPaymentInput } from './adapters/index.ts';
import { scrub } from './adapters/scrub.ts';
import { openCredentials } from './credentials.ts';
import * as repo from './integrations.repository.ts';
import { type Lease, commitPage } from './job-queue.ts';

// One run of an API provider's job: check the credential (what the provider answers is kept on
// the integration for its status), then import the payments of the last 365 days page by page
// through the one payment writer. The cursor is committed after each page, so a run that dies
// goes on from the last committed page; a page recorded again after a crash records nothing
// twice, as recordPayment is idempotent per transaction id.

export const HISTORY_DAYS = 365;

export interface HistoryRunContext {
  db: Kysely<Database>;
  keyring: Keyring;
  adapterOf(provider: string): ApiAdapter | null;
  lease: Lease;
  /** Checked between pages: a stopping worker hands the job back rather than finishing it. */
  stopping(): boolean;
  onPage?(provider: string, payments: number): void;
  /** Where the payments are counted (the rollup deriver; null: at once, under the website's lock). */
  paymentFold?: PaymentFold | null;
}

/** Why a run ended without an error: done, the job is no longer this worker's, or the worker stops. */
export type RunEnd = 'done' | 'lost' | 'stopped';

/** A failure that another attempt cannot mend: the provider refused the credential. */
export function isPermanent(error: unknown): boolean {
  return error instanceof ProviderError && (error.kind === 'revoked' || error.kind === 'forbidden');
}

/** The error as recorded on the job and shown in the status: the provider's words, never a credential. */
export function describeRunError(error: unknown, credentials: Record<string, string> | null): string {
  if (error instanceof ProviderError) return error.message;
  const message = error instanceof Error ? error.message : String(error);
  return credentials ? scrub(message, credentials) : message;
}

export class JobRunError extends Error {
  constructor(
    readonly original: unknown,
    readonly description: string,
    /** Whether the credential's check had an answer before the failure (else the failure is its answer). */
    readonly verified: boolean,
    /** The connection whose credentials the run used: a failure is its answer, not a newer connection's. */
    readonly connectedAt: string | null = null,
  ) {
    super(description);
  }
}

export async function runHistoryJob(ctx: HistoryRunContext, job: repo.JobRow): Promise<RunEnd> {
  const integration = await repo.findIntegrationRow(ctx.db, job.website_id, job.provider);
  // Disconnecting cancels the job in the same transaction; the worker sees the lease lost.
  if (!integration) return 'lost';
  const adapter = ctx.adapterOf(job.provider);
  if (!adapter) throw new JobRunError(null, `${job.provider} has no API to import payments from`, false);
  const credentials = openCredentials(ctx.keyring, integration);
  const fail = (error: unknown, verified: boolean) => new JobRunError(error, describeRunError(error, credentials), verified, integration.connected_at);

  try {
    const account = await adapter.verifyCredential(credentials);
    await repo.recordVerification(ctx.db, job.website_id, job.provider, integration.connected_at, account, new Date().toISOString());
  } catch (error) {
    throw fail(error, false);
  }

  const since = new Date(Date.parse(job.requested_at) - HISTORY_DAYS * 86_400_000);
  let cursor = job.cursor;
  for (;;) {
    if (ctx.stopping()) return 'stopped';
    let page;
    try {
      page = await adapter.listPayments(credentials, since, cursor);
    } catch (error) {
      throw fail(error, true);
    }
    for (const payment of page.payments) {
      try {
        await recordPayment(ctx.db, job.website_id, toPaymentInput(payment), payment.converted, ctx.paymentFold ?? null);
      } catch (error) {
        // A payment the writer refuses (an unknown currency) is left out; the rest of the history still counts.
        if (!(error instanceof AppError && error.statusCode === 400)) throw fail(error, true);
      }
    }
    // The last page's commit ends the job too, so a crash right after it imports nothing again.
    const committed = await commitPage(ctx.db, job, ctx.lease, { cursor: page.nextCursor, payments: page.payments.length }, new Date().toISOString());
    if (!committed) return 'lost';
    ctx.onPage?.(job.provider, page.payments.length);
    if (page.nextCursor === null) return 'done';
    cursor = page.nextCursor;
  }
}
