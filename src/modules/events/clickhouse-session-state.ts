import { sql } from 'kysely';
import type { ClickHouse } from '../../db/clickhouse/clickhouse.ts';
import type { ClickHouseEventRow } from '../../db/clickhouse/clickhouse-schema.ts';
import { SESSION_REACH_MS } from '../stats/clickhouse/scope-ch.ts';
import { latestOf } from '../stats/clickhouse/stored-sessions-ch.ts';
import { SESSION_ROW_COLUMNS, type SessionRow, attributesChanged, attributesOf, collapsingPair, foldSession, sessionRowOf } from './clickhouse-sessions.ts';

// The relay's session state: the current row of each session it has written lately, so that the
// next events of a session are shipped as a collapsing pair (clickhouse-sessions.ts) without a
// query. What the map lacks (after a restart, after a failure, or a session dropped to bound the
// map) is read from ClickHouse, which is the truth: the map only ever holds what ClickHouse holds
// (the relay calls `forget` when a shipment fails), so both give the same pairs.

/** Sessions kept in memory; beyond it the least recently written are dropped (and read again when needed). */
const MAX_KEPT = 100_000;

const keyOf = (websiteId: unknown, sessionId: unknown) => `${String(websiteId)}\u0000${String(sessionId)}`;

/**
 * Whether a session that started at `startedMs` is the one events between `first` and `last`
 * continue: within a session's reach of them, the rule a lookup in ClickHouse follows too, so a
 * session longer than a day is cut there whether it comes from the map or from ClickHouse.
 */
const continues = (startedMs: number, first: number, last: number) => startedMs >= first - SESSION_REACH_MS && startedMs <= last + SESSION_REACH_MS;

/**
 * Whether a batch's events (`list`) of a session shipped before may have moved its start (and so
 * its source) or its entry: one of them is the state's start or entry. Without the state before the
 * batch, the events shipped earlier are given the state's attributes again (the same values when
 * nothing moved).
 */
const entryOrStartMoved = (state: SessionRow, list: ClickHouseEventRow[]) =>
  state.events > list.length && list.some((event) => Number(event.occurred_ms) === state.started_ms || Number(event.occurred_ms) === state.entry_ms);

/** What a batch writes of its sessions: their states after it, their rows, and the sessions whose attributes it changed. */
export interface SessionPlan {
  batch: string;
  again: boolean;
  /** Each session's state after the batch, by website and session. */
  next: Map<string, SessionRow>;
  /** The collapsing pairs (and new sessions' rows). */
  rows: SessionRow[];
  /** Sessions shipped before whose entry or source this batch moved: their stored events carry `before`'s. */
  changed: { before: SessionRow; after: SessionRow }[];
}

export class SessionStates {
  private readonly kept = new Map<string, SessionRow>();

  constructor(
    private readonly ch: ClickHouse,
    /** Resolves once no INSERT with this query id runs on the server (the relay's wait after a failure). */
    private readonly untilNoInsertRuns: (queryId: string) => Promise<void>,
  ) {}

  /** Drops every kept state: after a failure, what ClickHouse holds is unknown until read. */
  forget(): void {
    this.kept.clear();
  }

  /**
   * The session rows of a batch's events (all of them, in arrival order), folded before anything
   * is written, so the events can carry their sessions' attributes. `again`: the batch may have
   * been shipped before, so the previous states are read from ClickHouse without its own rows
   * (the states the first attempt saw): the plan is the same on every attempt.
   */
  async plan(events: ClickHouseEventRow[], batch: string, again: boolean): Promise<SessionPlan> {
    const bySession = new Map<string, ClickHouseEventRow[]>();
    for (const event of events) {
      if (event.session_id === null || event.session_id === undefined) continue;
      const key = keyOf(event.website_id, event.session_id);
      const list = bySession.get(key);
      if (list) list.push(event);
      else bySession.set(key, [event]);
    }
    const plan: SessionPlan = { batch, again, next: new Map(), rows: [], changed: [] };
    if (bySession.size === 0) return plan;
    if (again) for (const [key, state] of await this.writtenStates(bySession, batch)) {
      // The first attempt wrote this session's pair: its new state is the truth, and nothing is written again.
      plan.next.set(key, state);
      const list = bySession.get(key)!;
      bySession.delete(key);
      if (entryOrStartMoved(state, list)) plan.changed.push({ before: state, after: state });
    }
    const previous = await this.previousStates(bySession, batch, again);
    for (const [key, list] of bySession) {
      const before = previous.get(key) ?? null;
      const state = foldSession(before, list, batch);
      plan.next.set(key, state);
      plan.rows.push(...collapsingPair(before, state));
      if (before && attributesChanged(before, state)) plan.changed.push({ before, after: state });
    }
    return plan;
  }

  /** The session attributes `event` is stored with: its session's after the batch (none without a session). */
  attributesFor(plan: SessionPlan, event: ClickHouseEventRow): Record<string, string | null> {
    const state = event.session_id === null || event.session_id === undefined ? undefined : plan.next.get(keyOf(event.website_id, event.session_id));
    return state ? attributesOf(state) : {};
  }

  /** Writes a plan's session rows (only those ClickHouse lacks when the batch may have been shipped) and keeps the new states. */
  async write(plan: SessionPlan): Promise<void> {
    if (plan.rows.length === 0) return;
    let rows = plan.rows;
    const queryId = `${plan.batch}-s`;
    if (plan.again) {
      await this.untilNoInsertRuns(queryId);
      const written = await this.writtenBy(plan.batch, rows);
      rows = rows.filter((row) => !written.has(`${keyOf(row.website_id, row.session_id)}\u0000${row.sign}\u0000${row.events}`));
    }
    await this.ch.insert('sessions', rows, queryId);
    for (const [key, state] of plan.next) {
      this.kept.delete(key);
      this.kept.set(key, state);
    }
    for (const key of this.kept.keys()) {
      if (this.kept.size <= MAX_KEPT) break;
      this.kept.delete(key);
    }
  }

  /**
   * The sessions of a batch shipped before whose new state (the batch's +1 row) ClickHouse holds,
   * with that state. Their pairs were written (a pair shares its start, so its partition, and an
   * INSERT writes a part whole), but their previous states may be gone: a background merge
   * collapses the pair's cancel row with the previous batch's row, so neither is there to read
   * (the relay's kill -9 test saw sessions whose pairs did not add up, twice in 14 runs on a busy
   * ClickHouse). A +1 row collapses only with a later batch's cancel row, which cannot exist yet.
   */
  private async writtenStates(bySession: Map<string, ClickHouseEventRow[]>, batch: string): Promise<Map<string, SessionRow>> {
    await this.untilNoInsertRuns(`${batch}-s`);
    const websites = [...new Set([...bySession.values()].map((list) => String(list[0]!.website_id)))];
    const rows = await this.ch.rows<Record<string, unknown>>(sql`select * from sessions where website_id in (${sql.join(websites)}) and batch = ${batch} and sign = 1`);
    const written = new Map<string, SessionRow>();
    for (const row of rows) {
      const key = keyOf(row.website_id, row.session_id);
      if (bySession.has(key)) written.set(key, sessionRowOf(row));
    }
    return written;
  }

  /** Each session's state before this batch: kept, or read from ClickHouse; absent for a new one. */
  private async previousStates(bySession: Map<string, ClickHouseEventRow[]>, batch: string, again: boolean): Promise<Map<string, SessionRow>> {
    const found = new Map<string, SessionRow>();
    const missing: ClickHouseEventRow[][] = [];
    for (const [key, list] of bySession) {
      const kept = again ? undefined : this.kept.get(key);
      if (kept) found.set(key, kept);
      else missing.push(list);
    }
    if (missing.length > 0) for (const row of await this.readStates(missing, batch)) found.set(keyOf(row.website_id, row.session_id), row);
    // The same reach rule for kept and read states.
    for (const [key, state] of found) {
      const instants = bySession.get(key)!.map((event) => Number(event.occurred_ms));
      if (!continues(state.started_ms, Math.min(...instants), Math.max(...instants))) found.delete(key);
    }
    return found;
  }

  /** The live row of each of these sessions in ClickHouse, leaving out the rows of `batch`. */
  private async readStates(sessions: ClickHouseEventRow[][], batch: string): Promise<SessionRow[]> {
    const instants = sessions.flat().map((event) => Number(event.occurred_ms));
    const from = Math.min(...instants) - SESSION_REACH_MS;
    const to = Math.max(...instants) + SESSION_REACH_MS;
    const websites = [...new Set(sessions.map((list) => String(list[0]!.website_id)))];
    const ids = [...new Set(sessions.map((list) => String(list[0]!.session_id)))];
    // The live row is the one of the highest version (a cancel row copies an older one).
    const latest = SESSION_ROW_COLUMNS.filter(([name]) => !['website_id', 'session_id', 'sign', 'events', 'batch'].includes(name)).map(
      ([name]) => sql`${latestOf(name)} as ${sql.ref(`v_${name}`)}`,
    );
    const rows = await this.ch.rows<Record<string, unknown>>(sql`select website_id, session_id, max(events) as v_events, ${sql.join(latest)}
      from sessions
      where website_id in (${sql.join(websites)}) and session_id in (${sql.join(ids)}) and batch != ${batch}
        and started_at >= toDateTime(${Math.max(0, Math.floor(from / 1000))}) and started_at <= toDateTime(${Math.ceil(to / 1000)})
      group by website_id, session_id
      having sum(sign) > 0`);
    return rows.map((raw) => {
      const row: Record<string, unknown> = { website_id: raw.website_id, session_id: raw.session_id, sign: 1, batch: '' };
      for (const [name, value] of Object.entries(raw)) if (name.startsWith('v_')) row[name.slice(2)] = value;
      return sessionRowOf(row);
    });
  }

  /** Which of these rows ClickHouse already holds from `batch` (session, sign and version). */
  private async writtenBy(batch: string, rows: SessionRow[]): Promise<Set<string>> {
    if (rows.length === 0) return new Set();
    const websites = [...new Set(rows.map((row) => row.website_id))];
    const found = await this.ch.rows<{ website_id: string; session_id: string; sign: number; events: string }>(sql`select website_id, session_id, sign, events
      from sessions where website_id in (${sql.join(websites)}) and batch = ${batch}`);
    return new Set(found.map((row) => `${keyOf(row.website_id, row.session_id)}\u0000${Number(row.sign)}\u0000${Number(row.events)}`));
  }
}
