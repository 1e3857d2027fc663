import type { FastifyBaseLogger } from 'fastify';
import type { Kysely, Selectable } from 'kysely';
import { describeFault, isDatabaseUnavailable } from '../db/faults.ts';
import type { Database, MailOutboxTable } from '../db/schema.ts';
import type { Keyring } from '../crypto/keyring.ts';
import { WakeLoop } from '../lib/wake-loop.ts';
import type { Mailer } from './mailer.ts';
import { mailTextToSend } from './sealed-text.ts';

// Sends the persisted mail of mail_outbox. A row is written (status pending, due now) in the same
// transaction as what it reports on: an alert's history row (alert mail, which belongs to a
// website), an invitation (website_id set) or a password reset (no website; account_id set). This
// worker claims due rows, sends them and records the outcome, on the alert's history row too. The retry state lives in the row (attempts, next_attempt_at),
// so a restart loses nothing: a pending row is simply due again. In-process retry libraries
// (p-retry, exponential-backoff) keep that state in memory, hence the one-line delay below.
//
// Claiming is a compare-and-set on `attempts` that also pushes next_attempt_at out by a lease, so
// two workers on one database never send the same row twice, and a row whose worker died while
// sending becomes due again when the lease runs out.

export interface OutboxWorkerOptions {
  /** Attempts before a row is marked failed. */
  maxAttempts: number;
  /** Delay after the first failed attempt; doubled after each further one. */
  retryDelayMs: number;
  maxRetryDelayMs: number;
  /** How long a claimed row is kept from other workers; longer than the mailer's timeouts. */
  leaseMs: number;
  pollIntervalMs: number;
  batchSize: number;
}

export const DEFAULT_OUTBOX_OPTIONS: OutboxWorkerOptions = {
  maxAttempts: 5,
  retryDelayMs: 30_000,
  maxRetryDelayMs: 30 * 60_000,
  leaseMs: 5 * 60_000,
  pollIntervalMs: 1_000,
  batchSize: 20,
};

/** 30 s, 1 min, 2 min, 4 min ... capped: the delay before attempt `failedAttempts + 1`. */
export function retryDelay(failedAttempts: number, options: Pick<OutboxWorkerOptions, 'retryDelayMs' | 'maxRetryDelayMs'>): number {
  return Math.min(options.retryDelayMs * 2 ** Math.max(0, failedAttempts - 1), options.maxRetryDelayMs);
}

type OutboxRow = Selectable<MailOutboxTable>;

/**
 * Mail that is not an alert's (a password reset, an invitation) carries a one-time link: once it
 * is sent or given up, its text is replaced, so the link's token does not stay in the database.
 */
export const LINK_MAIL_TEXT_REMOVED = '[removed once sent: the message held a one-time link]';

function keptText(row: OutboxRow): { text?: string; html?: null; list_unsubscribe?: null } {
  return row.alert_history_id ? {} : { text: LINK_MAIL_TEXT_REMOVED, html: null, list_unsubscribe: null };
}

/** The message of a row: its text, and its HTML part and unsubscribe URL when it has them, opened when sealed. */
function messageOf(keyring: Keyring | null, row: OutboxRow) {
  const opened = (text: string | null | undefined) => (text ? mailTextToSend(keyring, { id: row.id, text }) : undefined);
  return {
    to: row.to_address,
    subject: row.subject,
    text: mailTextToSend(keyring, row),
    html: opened(row.html),
    listUnsubscribe: opened(row.list_unsubscribe),
  };
}

export class OutboxWorker {
  private readonly options: OutboxWorkerOptions;
  private readonly loop: WakeLoop;
  /** Set while the database is unreachable, so an outage is logged once, not on every poll. */
  private databaseDown = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly mailer: Mailer,
    private readonly log: FastifyBaseLogger,
    options: Partial<OutboxWorkerOptions> = {},
    /** Opens the sealed text of link mail (src/mail/sealed-text.ts). */
    private readonly keyring: Keyring | null = null,
  ) {
    this.options = { ...DEFAULT_OUTBOX_OPTIONS, ...options };
    this.loop = new WakeLoop(() => this.sendDue(), this.options.pollIntervalMs);
  }

  /** Sends what is already due (mail left by an earlier process included), then polls. */
  start(): void {
    this.loop.start();
  }

  /** Look for due mail now (called right after a commit that may have queued some). */
  poke(): void {
    this.loop.wake();
  }

  /** Stops polling and waits for the send in progress; unsent rows stay pending for the next start. */
  async stop(): Promise<void> {
    this.loop.halt();
    await this.loop.idle();
  }

  private async sendDue(): Promise<void> {
    try {
      await this.drain();
      if (this.databaseDown) this.log.info('mail outbox: the database answers again');
      this.databaseDown = false;
    } catch (error) {
      if (!isDatabaseUnavailable(error)) {
        this.log.error({ error: this.mailer.scrub(error) }, 'mail outbox: could not read the queue');
      } else if (!this.databaseDown) {
        this.databaseDown = true;
        this.log.warn({ fault: describeFault(error) }, 'mail outbox: database unavailable; retrying at every poll');
      }
    }
  }

  /** Processes due rows until none is left (or the worker stops). */
  private async drain(): Promise<void> {
    while (!this.loop.isStopped) {
      const due = await this.db
        .selectFrom('mail_outbox')
        .selectAll()
        .where('status', '=', 'pending')
        .where('next_attempt_at', '<=', new Date().toISOString())
        .orderBy('next_attempt_at')
        .orderBy('id')
        .limit(this.options.batchSize)
        .execute();
      if (due.length === 0) return;
      for (const row of due) {
        if (this.loop.isStopped) return;
        if (await this.claim(row)) await this.deliver({ ...row, attempts: row.attempts + 1 });
      }
    }
  }

  private async claim(row: OutboxRow): Promise<boolean> {
    const result = await this.db
      .updateTable('mail_outbox')
      .set({ attempts: row.attempts + 1, next_attempt_at: new Date(Date.now() + this.options.leaseMs).toISOString() })
      .where('id', '=', row.id)
      .where('status', '=', 'pending')
      .where('attempts', '=', row.attempts)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  private async deliver(row: OutboxRow): Promise<void> {
    try {
      await this.mailer.send(messageOf(this.keyring, row));
    } catch (error) {
      await this.recordFailure(row, this.mailer.scrub(error));
      return;
    }
    const now = new Date().toISOString();
    await this.db.transaction().execute(async (trx) => {
      await trx.updateTable('mail_outbox').set({ status: 'sent', sent_at: now, last_error: null, ...keptText(row) }).where('id', '=', row.id).execute();
      if (row.alert_history_id) {
        await trx.updateTable('alert_history').set({ status: 'sent', error: null }).where('id', '=', row.alert_history_id).execute();
      }
    });
    this.log.info({ outboxId: row.id, attempts: row.attempts }, 'mail outbox: sent');
  }

  private async recordFailure(row: OutboxRow, error: string): Promise<void> {
    if (row.attempts >= this.options.maxAttempts) {
      await this.db.transaction().execute(async (trx) => {
        await trx.updateTable('mail_outbox').set({ status: 'failed', last_error: error, ...keptText(row) }).where('id', '=', row.id).execute();
        if (row.alert_history_id) {
          await trx.updateTable('alert_history').set({ status: 'failed', error }).where('id', '=', row.alert_history_id).execute();
        }
      });
      this.log.error({ outboxId: row.id, attempts: row.attempts, error }, 'mail outbox: giving up');
      return;
    }
    const delay = retryDelay(row.attempts, this.options);
    const nextAttemptAt = new Date(Date.now() + delay).toISOString();
    await this.db.updateTable('mail_outbox').set({ next_attempt_at: nextAttemptAt, last_error: error }).where('id', '=', row.id).execute();
    this.log.warn({ outboxId: row.id, attempts: row.attempts, nextAttemptAt, error }, 'mail outbox: send failed, will retry');
  }
}
