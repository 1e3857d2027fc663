import { sql } from 'kysely';
import type { ClickHouse } from '../../db/clickhouse/clickhouse.ts';
import type { ClickHouseEventRow } from '../../db/clickhouse/clickhouse-schema.ts';
import { SESSION_REACH_MS } from '../stats/clickhouse/scope-ch.ts';
import { SESSION_ROW_COLUMNS, type SessionRow, collapsingPair, foldSession, sessionRowOf } from './clickhouse-sessions.ts';

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
   * Writes the session rows of a batch's events (all of them, in arrival order). `again`: the
   * batch may have been shipped before, so its previous states are read from ClickHouse without
   * its own rows (the states the first attempt saw) and only the rows ClickHouse lacks are written.
   */
  async ship(events: ClickHouseEventRow[], batch: string, again: boolean): Promise<void> {
    const bySession = new Map<string, ClickHouseEventRow[]>();
    for (const event of events) {
      if (event.session_id === null || event.session_id === undefined) continue;
      const key = keyOf(event.website_id, event.session_id);
      const list = bySession.get(key);
      if (list) list.push(event);
      else bySession.set(key, [event]);
    }
    if (bySession.size === 0) return;
    const previous = await this.previousStates(bySession, batch, again);
    const next = new Map<string, SessionRow>();
    let rows: SessionRow[] = [];
    for (const [key, list] of bySession) {
      const state = foldSession(previous.get(key) ?? null, list, batch);
      next.set(key, state);
      rows.push(...collapsingPair(previous.get(key) ?? null, state));
    }
    const queryId = `${batch}-s`;
    if (again) {
      await this.untilNoInsertRuns(queryId);
      const written = await this.writtenBy(batch, rows);
      rows = rows.filter((row) => !written.has(`${keyOf(row.website_id, row.session_id)}\u0000${row.sign}\u0000${row.events}`));
    }
    await this.ch.insert('sessions', rows, queryId);
    for (const [key, state] of next) {
      this.kept.delete(key);
      this.kept.set(key, state);
    }
    for (const key of this.kept.keys()) {
      if (this.kept.size <= MAX_KEPT) break;
      this.kept.delete(key);
    }
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
      ([name]) => sql`argMax(${sql.ref(name)}, events) as ${sql.ref(`v_${name}`)}`,
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
