import type { FastifyBaseLogger } from 'fastify';
import { type Kysely, sql } from 'kysely';
import { describeFault } from '../../db/faults.ts';
import { isPostgres } from '../../db/engine.ts';
import { lockWebsiteRollups } from '../../db/locks.ts';
import { prepareListQuery, sqlList } from '../../db/prepared.ts';
import type { Database, EventsTable } from '../../db/schema.ts';
import { chunks } from '../../lib/chunks.ts';
import { eventFromRow } from '../../db/event-columns.ts';
import type { RecordedEvent } from '../../db/event-records.ts';
import { BacklogSettles } from './backlog-settles.ts';
import { foldEvents } from './derive-rollups.ts';
import { countPayments } from './payment-counts.ts';

// The rollups are derived from the raw events after the answer, many events at a time.
//
// Ingestion commits each event with a row in rollup_backlog (record-events.ts), in the
// transaction that answers the request. Deriving a batch of events costs about half as much per
// event at a thousand events as at the sixteen a request batch holds under load (most statements
// are set-based over the batch, and a commit writes each touched page once), so the deriver
// waits up to DERIVE_DELAY_MS for events to gather, or starts at once when EAGER_EVENTS wait.
// A derivation folds a website's events into every rollup and deletes their backlog rows in one
// transaction, so a crash at any moment leaves each event either derived once or still waiting,
// and whatever waits is derived when the server starts again.
//
// Whatever reads or rewrites the rollups settles the website's backlog first: every read of the
// website API (a client reads its own events, whichever instance took them), and, inside their
// own transactions, the deletes and rebuilds that re-derive rollups from the raw events (which
// would otherwise count a waiting event once from the events table and again when derived).

/**
 * Events derived per transaction by the background deriver. On SQLite a derivation holds the one
 * connection, so this bounds how long ingestion waits behind it: at 2,000 the bench's ingestion
 * p99 was 274 ms, at 500 133 ms with the most events/s (4,207-4,251 against 3,930-3,990), at 250
 * 76 ms and 4,058 events/s.
 */
const EVENTS_PER_TRANSACTION = 500;
/** How long the deriver lets events gather after a commit. */
const DERIVE_DELAY_MS = 250;
/** This many waiting events start a derivation at once. */
const EAGER_EVENTS = 2000;
/**
 * Beyond this many of the process's events not yet derived, ingestion waits for the deriver
 * before its next commit, so a load the deriver cannot keep up with slows the answers
 * instead of growing the backlog (and the time a read or a stop spends settling it) without
 * bound. Measured on PostgreSQL without it: 18,000 events waiting after 10 s of load.
 */
const MAX_WAITING = 10_000;
/** How often the backlog is looked at besides (rows another instance left behind when it died). */
const POLL_INTERVAL_MS = 10_000;
/** Rows per backlog insert (two bound values each). */
const ROWS_PER_INSERT = 500;

const insertBacklog = prepareListQuery(2, (db, rows: [websiteId: string, eventId: string][]) =>
  db.insertInto('rollup_backlog').values(rows.map(([websiteId, eventId]) => ({ website_id: websiteId, event_id: eventId }))),
);

/** In the transaction that stores the events: their rollups are to be derived. */
export async function queueForRollups(trx: Kysely<Database>, events: RecordedEvent[]): Promise<void> {
  const rows = events.map((e): [string, string] => [e.websiteId, e.id]);
  for (const part of chunks(rows, ROWS_PER_INSERT)) await insertBacklog.all(trx, part);
}

/**
 * In the transaction that writes payments (inserted, refunded, given their conversion; migration
 * 0038): the fold is to count them as they are then (payment-counts.ts), in order with the events.
 */
export async function queuePaymentsForRollups(trx: Kysely<Database>, websiteId: string, paymentIds: string[]): Promise<void> {
  if (paymentIds.length === 0) return;
  await trx
    .insertInto('rollup_backlog')
    .values(paymentIds.map((paymentId) => ({ website_id: websiteId, payment_id: paymentId })))
    .execute();
}

/** A backlog row with its event's columns (null when the event is gone, or on a payment's row). */
type BacklogRow = EventsTable & { backlog_seq: number | string; unbuilt: number | string; backlog_payment_id: string | null };

/**
 * Derives up to `limit` (default: all) of the website's waiting events into the rollups and
 * deletes their backlog rows, in the caller's transaction; returns how many rows it took. On
 * PostgreSQL the website's derived-data lock (src/db/locks.ts) makes derivers of one website
 * take turns, and the rows are read after it is held, so none is derived twice.
 */
export async function deriveBacklog(trx: Kysely<Database>, websiteId: string, limit = Number.POSITIVE_INFINITY): Promise<number> {
  await lockWebsiteRollups(trx, websiteId);
  let taken = 0;
  while (taken < limit) {
    const take = Math.min(EVENTS_PER_TRANSACTION, limit - taken);
    // Every delete of events derives the backlog first (and a website's deletion takes its rows),
    // so each row names a stored event; one that does not is skipped, and its row goes too.
    // While a build of the website runs (derived-build.ts), the events past its cursor (in the
    // order visitor, instant, id) are left out: a later chunk of it reads them from the events table.
    // A payment's row (payment_id) is counted after the batch's events: counting reads the
    // payment through `counted` and the events' fold the payments through it too, so the tables
    // end the same in either order, and a payment whose visitor's events wait counts on their rows.
    const { rows } = await sql<BacklogRow>`select b.seq as backlog_seq, b.payment_id as backlog_payment_id, e.*,
        case when d.website_id is null then 0 when d.phase = 'derive' and (e.visitor_id, e.occurred_at, e.id) <= (d.cursor, d.cursor_at, d.cursor_event_id) then 0 else 1 end as unbuilt
      from rollup_backlog b left join events e on e.id = b.event_id left join derived_builds d on d.website_id = b.website_id
      where b.website_id = ${websiteId} order by b.seq limit ${take}`.execute(trx);
    if (rows.length === 0) break;
    await foldEvents(trx, rows.filter((row) => row.id !== null && Number(row.unbuilt) === 0).map(eventFromRow));
    const payments = [...new Set(rows.flatMap((row) => (row.backlog_payment_id === null ? [] : [row.backlog_payment_id])))];
    if (payments.length > 0) await countPayments(trx, websiteId, sql`p.id in (${sqlList(payments)})`);
    await deleteTaken(trx, websiteId, rows.map((row) => row.backlog_seq));
    taken += rows.length;
    if (rows.length < take) break;
  }
  return taken;
}

/**
 * Deletes the backlog rows a fold took. On PostgreSQL exactly those: sequence values are taken at
 * insert and committed in any order (the event writer's batch and a payment's request), so a row
 * below the last one taken may commit after the fold read the backlog, and `seq <= last` would
 * delete it unfolded. SQLite commits one transaction at a time, so no such row can appear.
 */
async function deleteTaken(trx: Kysely<Database>, websiteId: string, seqs: (number | string)[]): Promise<void> {
  const last = seqs[seqs.length - 1]!;
  if (isPostgres(trx)) {
    await sql`delete from rollup_backlog where website_id = ${websiteId} and seq = any(${seqs.map(String)}::bigint[])`.execute(trx);
  } else {
    await sql`delete from rollup_backlog where website_id = ${websiteId} and seq <= ${last}`.execute(trx);
  }
}

/** Whether any of the website's events waits for its rollups. */
export async function hasBacklog(db: Kysely<Database>, websiteId: string): Promise<boolean> {
  const row = await db.selectFrom('rollup_backlog').select('seq').where('website_id', '=', websiteId).limit(1).executeTakeFirst();
  return row !== undefined;
}

/** The websites with waiting events. */
async function backlogWebsites(db: Kysely<Database>): Promise<string[]> {
  const rows = await db.selectFrom('rollup_backlog').select('website_id').distinct().execute();
  return rows.map((row) => row.website_id);
}

/**
 * Folds up to `limit` (all without one) of a website's waiting events in, in a transaction of its
 * own; how many it took. On a SQLite file, in the derived-data thread (derived-data-thread.ts).
 */
export type BacklogFold = (websiteId: string, limit?: number) => Promise<number>;

/** Derives the backlog in the background, and on demand before a website's rollups are read. */
export class RollupDeriver {
  private running: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private poll: NodeJS.Timeout | null = null;
  /**
   * This process's events not yet derived, as far as it knows: added at each commit, taken off
   * at each derivation, and zero when a pass finds the backlog empty (another instance may
   * have derived them).
   */
  private pending = 0;
  private failing = false;
  private stopped = false;
  /** The settles of reads, shared among the reads that need the same one. */
  private readonly settles = new BacklogSettles(async (websiteId) => {
    if (!(await hasBacklog(this.db, websiteId))) return;
    this.derived(await this.fold(websiteId));
  });

  constructor(
    private readonly db: Kysely<Database>,
    private readonly log: FastifyBaseLogger,
    /** How many of this process's events may wait before ingestion is held back. */
    private readonly maxWaiting = MAX_WAITING,
    /** Where a fold runs: by default a transaction on `db`. */
    private readonly fold: BacklogFold = (websiteId, limit) => db.transaction().execute((trx) => deriveBacklog(trx, websiteId, limit)),
  ) {}

  /** Derives what an earlier process left waiting, then keeps watching. */
  start(): void {
    this.stopped = false;
    this.poll = setInterval(() => this.schedule(0), POLL_INTERVAL_MS);
    this.poll.unref();
    this.schedule(0);
  }

  /** `count` events were committed: derive them soon (at once when many wait). */
  wake(count: number): void {
    this.pending += count;
    this.schedule(this.pending >= EAGER_EVENTS ? 0 : DERIVE_DELAY_MS);
  }

  /**
   * Resolves at once unless `maxWaiting` of this process's events wait: the event writer awaits
   * it before each commit. Never waits while derivations fail (ingestion goes on; the events are
   * safe in the backlog).
   */
  async throttle(): Promise<void> {
    while (this.pending >= this.maxWaiting && !this.stopped && !this.failing) {
      this.schedule(0);
      await (this.running ?? new Promise((resolve) => setImmediate(resolve)));
    }
  }

  /**
   * Resolves once the website's events committed before the call (before the analytics read under
   * way began: backlog-settles.ts) are in its rollups (every website's without an argument).
   * Rejects when the database cannot derive them now.
   */
  async settle(websiteId?: string): Promise<void> {
    if (websiteId === undefined) {
      // Derives everything itself, so a scheduled derivation is dropped and one under way awaited:
      // once this resolves, the deriver is idle unless events came in meanwhile.
      do {
        if (this.timer) clearTimeout(this.timer);
        this.timer = null;
        if (this.running) await this.running;
        await this.deriveAll(true);
      } while (this.running);
      return;
    }
    return this.settles.settle(websiteId);
  }

  /** Stops the timers and derives what is left (the graceful stop of the server). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.poll) clearInterval(this.poll);
    this.timer = this.poll = null;
    if (this.running) await this.running.catch(() => {});
    await this.deriveAll(true);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.running) return; // a running derivation looks again when it ends
    if (this.timer) {
      if (delayMs > 0) return;
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running ??= this.deriveAll()
        .then(() => this.recovered())
        .catch((error: unknown) => this.failed(error))
        .finally(() => {
          this.running = null;
          if (this.pending > 0) this.schedule(this.pending >= EAGER_EVENTS ? 0 : DERIVE_DELAY_MS);
        });
    }, delayMs);
    this.timer.unref();
  }

  /**
   * One pass over the websites with waiting events, again while a website had more than one
   * transaction's worth or enough gathered meanwhile; with `drain`, until nothing waits.
   */
  private async deriveAll(drain = false): Promise<void> {
    for (;;) {
      const websites = await backlogWebsites(this.db);
      if (websites.length === 0) {
        this.pending = 0;
        return;
      }
      let full = false;
      for (const websiteId of websites) {
        const began = performance.now();
        const taken = await this.fold(websiteId, EVENTS_PER_TRANSACTION);
        this.derived(taken);
        // Short of the limit, the fold took every event committed before it began: reads that
        // need no more than those are served by it (backlog-settles.ts).
        if (taken < EVENTS_PER_TRANSACTION) this.settles.derivedFrom(websiteId, began);
        full ||= taken === EVENTS_PER_TRANSACTION;
      }
      // What came in meanwhile waits for the next turn unless enough of it gathered.
      if (!drain && !full && this.pending < EAGER_EVENTS) return;
    }
  }

  private derived(count: number): void {
    this.pending = Math.max(0, this.pending - count);
  }

  private recovered(): void {
    if (this.failing) this.log.info('rollups: derived the waiting events again');
    this.failing = false;
  }

  private failed(error: unknown): void {
    // The events are safe in the backlog; the poll (and the next commit) tries again.
    if (!this.failing) this.log.warn({ fault: describeFault(error) }, 'rollups: cannot derive the waiting events now; retrying');
    this.failing = true;
  }
}
