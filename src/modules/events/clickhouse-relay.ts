import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import { type Kysely, sql } from 'kysely';
import type { ClickHouse } from '../../db/clickhouse/clickhouse.ts';
import type { ClickHouseEventRow } from '../../db/clickhouse/clickhouse-schema.ts';
import { isPostgres } from '../../db/engine.ts';
import { describeFault } from '../../db/faults.ts';
import type { Database } from '../../db/schema.ts';
import { buildEventRollupsOnce, daysOf, rebuildEventRollups } from './clickhouse-event-rollups.ts';
import { recopyTouchedDays, sampledTablesStep, tablesUpgraded } from './clickhouse-sampling-upgrade.ts';
import { eventsHaveSessionAttributes, updateChangedAttributes } from './clickhouse-session-attributes.ts';
import { fillSessionsStep, refillTouchedDays, sessionsTableReady } from './clickhouse-session-fill.ts';
import { closeSessions, rebuildTouchedSessions } from './clickhouse-session-rollups.ts';
import { SessionStates } from './clickhouse-session-state.ts';
import { currentReadStart } from '../../lib/read-start.ts';

// Ships accepted events from the relational event_relay table to ClickHouse, exactly once.
//
// An event is acknowledged once its relay row is committed (durable on the relational engine).
// The relay then claims up to BATCH_SIZE rows under a new batch name (one UPDATE, committed),
// inserts them into ClickHouse, and deletes them. A crash (of Sightline or ClickHouse) can cut
// this anywhere:
// - before the claim commits: the rows are unclaimed and shipped later;
// - after the claim, before or during the insert, or after it but before the delete: the rows
//   are still here under their batch name. Such a batch is shipped again, but only the rows
//   ClickHouse does not hold yet, looked up by id (an INSERT spanning two months writes two
//   parts, so it can be half done). An INSERT whose answer was lost may still be running on the
//   server: every INSERT carries its batch name as query id, and the lookup waits until no query
//   of that id runs (and at least SETTLE_AFTER_FAILURE_MS after the failure, for a request still
//   on its way to the server), so it sees the outcome. test/clickhouse-relay.test.ts cuts each of
//   these windows.
// So no acknowledged event is lost and none is stored twice, without the deduplication
// features this ClickHouse release lacks. On PostgreSQL an advisory lock makes one instance at a
// time the shipper, so two never ship the same batch.
//
// The rollups (clickhouse-event-rollups.ts) are filled by views at each INSERT. A batch shipped
// again may have had its events written without the views' rows, so its days are computed again
// from the events. The session rollups (clickhouse-session-rollups.ts) are written here, for the
// hours old enough once a shipment has emptied the queue, and computed again for a batch whose
// events reach sessions already written. Work that must see no INSERT meanwhile (that, the
// rollups' first build, a delete's rebuild) runs under `exclusive`: after this process's
// shipment, and on PostgreSQL under the shippers' lock, so no instance ships during it.
//
// Sessions are written at ingestion too (clickhouse-sessions.ts): a batch's sessions are folded
// first, its events stored with their sessions' attributes (entry page, source), then the rows of
// the sessions they change, as collapsing pairs from the state the relay keeps
// (clickhouse-session-state.ts), with the same protocol (the batch's name on every row, its
// query id, only the rows ClickHouse lacks when a batch is shipped again). An installation that
// had events before the sessions table is filled a day per turn first (clickhouse-session-fill.ts),
// then both tables are copied into their declarations with the sampling key (the events with their
// sessions' attributes), a day per turn (clickhouse-sampling-upgrade.ts). A batch that moves a
// session's entry or source updates the attributes of the session's events shipped before
// (clickhouse-session-attributes.ts).

/** Rows per shipment: one INSERT, and an id lookup that fits ClickHouse's 256 KiB query limit. */
const BATCH_SIZE = 2000;
const POLL_INTERVAL_MS = 1000;
/** After a failed INSERT, how long before its outcome is looked up. */
const SETTLE_AFTER_FAILURE_MS = 1000;
/** How long the lookup waits for an INSERT of the batch that still runs. */
const RUNNING_INSERT_WAIT_MS = 60_000;
/** pg_try_advisory_lock key: "sl-relay". */
const RELAY_LOCK = 0x736c72656c6179n;
/** How often the relay looks for hours whose sessions it can write to the session rollups. */
const CLOSE_CHECK_INTERVAL_MS = 60_000;

export class ClickHouseRelay {
  private running: Promise<void> | null = null;
  private dirty = true;
  /** When the last shipment that ended well began: every event this process committed before it is in ClickHouse. */
  private shippedFrom = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | null = null;
  private failing = false;
  private failedAt = 0;
  /** This process's shipments and exclusive work, one at a time. */
  private queue: Promise<unknown> = Promise.resolve();
  private rollupsBuilt = false;
  private nextCloseCheck = 0;
  /** Whether the sessions table holds every session (null: not asked yet in this process). */
  private sessionsReady: boolean | null = null;
  /** Whether the events and sessions tables have their sampling key and the events their session attributes (null: not asked yet in this process). */
  private upgraded: boolean | null = null;
  /** Whether the events table has the session attribute columns (null: not asked yet in this process). */
  private attributesReady: boolean | null = null;
  private readonly sessions: SessionStates;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly ch: ClickHouse,
    private readonly log: FastifyBaseLogger,
  ) {
    this.sessions = new SessionStates(ch, (queryId) => this.untilNoInsertRuns(queryId));
  }

  start(): void {
    this.timer = setInterval(() => this.wake(), POLL_INTERVAL_MS);
    this.timer.unref();
    this.wake();
  }

  /** New rows were committed: ship them soon. */
  wake(): void {
    this.dirty = true;
    void this.run().catch(() => {});
  }

  /**
   * Resolves once what this process committed before the call is in ClickHouse (reads call it,
   * so a client reads its own events). Rejects when ClickHouse cannot take them now.
   */
  async settle(): Promise<void> {
    // A read that needs no event newer than the start of the last full shipment waits for none
    // (its allowed lag: src/plugins/analytics-reads.ts).
    if (this.shippedFrom >= currentReadStart()) return;
    if (this.running) await this.running.catch(() => {});
    if (this.dirty) await this.run();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.running) await this.running.catch(() => {});
  }

  /** Runs `work` while no instance ships events to ClickHouse. */
  /** Drops the session states kept in memory: after sessions were deleted and grouped again in ClickHouse (an import's deletion). */
  forgetSessions(): void {
    this.sessions.forget();
  }

  exclusive<T>(work: () => Promise<T>): Promise<T> {
    return this.inTurn(() => (isPostgres(this.db) ? this.withLock('wait', () => work()).then((result) => result as T) : work()));
  }

  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const result = this.queue.then(work);
    this.queue = result.catch(() => {});
    return result;
  }

  private run(): Promise<void> {
    if (this.running) return this.running;
    const began = performance.now();
    this.running = this.shipAll()
      .then(() => {
        this.shippedFrom = Math.max(this.shippedFrom, began);
      })
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  private async shipAll(): Promise<void> {
    this.dirty = false;
    try {
      await this.inTurn(() => this.withShipperLock(async (db) => {
        if (!this.rollupsBuilt) {
          await buildEventRollupsOnce(this.ch);
          this.rollupsBuilt = true;
        }
        this.sessionsReady ??= await sessionsTableReady(this.ch);
        this.upgraded ??= await tablesUpgraded(this.ch);
        // Asked every turn until true: another instance may finish the upgrade.
        if (!this.attributesReady) this.attributesReady = await eventsHaveSessionAttributes(this.ch);
        let leftover = await this.leftoverBatch(db);
        while (leftover !== null) {
          await this.ship(db, leftover, true);
          leftover = await this.leftoverBatch(db);
        }
        for (;;) {
          const batch = randomBytes(12).toString('hex');
          const claimed = await db
            .updateTable('event_relay')
            .set({ batch })
            .where('seq', 'in', db.selectFrom('event_relay').select('seq').where('batch', 'is', null).orderBy('seq').limit(BATCH_SIZE))
            .executeTakeFirst();
          if (Number(claimed.numUpdatedRows) === 0) break;
          await this.ship(db, batch, false);
        }
        // Every event accepted so far is shipped: the upgrade's fill can take its next day.
        if (!this.sessionsReady) this.sessionsReady = await fillSessionsStep(this.ch, Date.now());
        // Then the upgrade to the tables declared with the sampling key and the session attributes, a day per turn.
        else if (!this.upgraded) {
          this.upgraded = await sampledTablesStep(this.ch, Date.now());
          this.attributesReady = await eventsHaveSessionAttributes(this.ch);
        }
        // Every event accepted so far is shipped: hours old enough can be closed.
        if (Date.now() >= this.nextCloseCheck) {
          await closeSessions(this.ch, Date.now());
          this.nextCloseCheck = Date.now() + CLOSE_CHECK_INTERVAL_MS;
        }
      }));
      if (this.failing) this.log.info('event relay: ClickHouse takes events again');
      this.failing = false;
    } catch (error) {
      // What ClickHouse holds of the sessions is unknown now: their states are read from it again.
      this.sessions.forget();
      this.dirty = true;
      this.failedAt = Date.now();
      if (!this.failing) this.log.warn({ fault: describeFault(error) }, 'event relay: cannot ship events to ClickHouse; retrying every second');
      this.failing = true;
      throw error;
    }
  }

  /** On PostgreSQL, one shipper among the instances (the others find nothing to do until it ends). */
  private async withShipperLock(work: (db: Kysely<Database>) => Promise<void>): Promise<void> {
    if (!isPostgres(this.db)) return work(this.db);
    await this.withLock('try', work);
  }

  /** Holds the shippers' advisory lock on one connection for `work`: if free ('try'), or once it is ('wait'). */
  private async withLock<T>(how: 'try' | 'wait', work: (db: Kysely<Database>) => Promise<T>): Promise<T | undefined> {
    return this.db.connection().execute(async (db) => {
      const key = sql`${RELAY_LOCK.toString()}::bigint`;
      if (how === 'wait') await sql`select pg_advisory_lock(${key})`.execute(db);
      else {
        const locked = await sql<{ locked: boolean }>`select pg_try_advisory_lock(${key}) as locked`.execute(db);
        if (!locked.rows[0]?.locked) return undefined;
      }
      try {
        return await work(db);
      } finally {
        await sql`select pg_advisory_unlock(${key})`.execute(db);
      }
    });
  }

  private async leftoverBatch(db: Kysely<Database>): Promise<string | null> {
    const row = await db.selectFrom('event_relay').select('batch').where('batch', 'is not', null).limit(1).executeTakeFirst();
    return row?.batch ?? null;
  }

  private async ship(db: Kysely<Database>, batch: string, mayBeShipped: boolean): Promise<void> {
    const rows = await db.selectFrom('event_relay').select('row').where('batch', '=', batch).orderBy('seq').execute();
    const all = rows.map((r) => JSON.parse(r.row) as ClickHouseEventRow);
    // The batch's sessions are folded first, so each event is stored with its session's attributes.
    const plan = this.sessionsReady ? await this.sessions.plan(all, batch, mayBeShipped) : null;
    let events = all;
    if (mayBeShipped) {
      await this.untilNoInsertRuns(batch);
      const present = await this.idsInClickHouse(events);
      events = events.filter((event) => !present.has(event.id as string));
    }
    if (plan && this.attributesReady) events = events.map((event) => ({ ...event, ...this.sessions.attributesFor(plan, event) }));
    await this.ch.insert('events', events, batch);
    if (mayBeShipped) await rebuildEventRollups(this.ch, daysOf(all));
    if (plan) {
      await this.sessions.write(plan);
      // Events shipped before, of sessions whose entry or source this batch moved.
      await updateChangedAttributes(this.ch, plan.changed);
    } else await refillTouchedDays(this.ch, all);
    await rebuildTouchedSessions(this.ch, all, Date.now());
    if (this.upgraded === false) await recopyTouchedDays(this.ch, all);
    await db.deleteFrom('event_relay').where('batch', '=', batch).execute();
  }

  /** Waits until an earlier INSERT of this query id (a batch's), if any, has ended on the server. */
  private async untilNoInsertRuns(queryId: string): Promise<void> {
    const sinceFailure = Date.now() - this.failedAt;
    if (sinceFailure < SETTLE_AFTER_FAILURE_MS) await sleep(SETTLE_AFTER_FAILURE_MS - sinceFailure);
    const deadline = Date.now() + RUNNING_INSERT_WAIT_MS;
    for (;;) {
      const [row] = await this.ch.rows<{ running: string }>(sql`select count() as running from system.processes where query_id = ${queryId}`);
      if (Number(row?.running ?? 0) === 0) return;
      if (Date.now() > deadline) throw new Error('an earlier INSERT of the batch is still running on ClickHouse');
      await sleep(100);
    }
  }

  /** Which of the events ClickHouse already holds (by id, within their websites and instants). */
  private async idsInClickHouse(events: ClickHouseEventRow[]): Promise<Set<string>> {
    if (events.length === 0) return new Set();
    const instants = events.map((e) => Number(e.occurred_ms));
    const from = Math.min(...instants);
    const to = Math.max(...instants);
    const websites = [...new Set(events.map((e) => e.website_id as string))];
    const found = await this.ch.rows<{ id: string }>(sql`select id from events
      where website_id in (${sql.join(websites)})
        and occurred_at >= toDateTime(${Math.floor(from / 1000)}) and occurred_at <= toDateTime(${Math.ceil(to / 1000)})
        and occurred_ms >= ${from} and occurred_ms <= ${to}
        and id in (${sql.join(events.map((e) => e.id))})`);
    return new Set(found.map((row) => row.id));
  }
}
