import type { VisitorDaysTable } from '../../db/schema.ts';
import { type NewEvent, isGoal } from '../../db/event-records.ts';

type VisitorDayRow = VisitorDaysTable;

// The arithmetic of the day rollups, without SQL, shared by ingestion (a batch over the rows it
// loaded) and by the rebuild (every event of a website over no rows):
// - visitor_days: per visitor and local day, pageviews, sessions (a session id different from
//   the last one seen that day starts a new one), goals, and the links to the visitor's
//   previous active day and previous converting day;
// - daily_totals: visitors (new visitor-day rows), sessions, pageviews, converted visitors
//   (a visitor-day whose goals went from 0 to 1);
// - visitor_recency: rows per (day, previous day), so a distinct count over days is a sum.
// Every event counts its visitor as a visitor of that day, so converted visitors never exceed
// visitors.

export interface DayTotalsDelta {
  day: string;
  visitors: number;
  sessions: number;
  pageviews: number;
  converted_visitors: number;
}

export interface RecencyDelta {
  day: string;
  prev_day: string;
  visitors: number;
  converted: number;
}

export type RecordedFields = Pick<NewEvent, 'type' | 'name' | 'sessionId'>;


export class VisitorDayBook {
  private readonly byVisitor = new Map<string, Map<string, VisitorDayRow>>();
  private readonly created = new Set<VisitorDayRow>();
  private readonly converted = new Set<VisitorDayRow>();
  private readonly changed = new Set<VisitorDayRow>();
  private readonly totals = new Map<string, DayTotalsDelta>();
  private readonly recency = new Map<string, RecencyDelta>();

  constructor(private readonly websiteId: string) {}

  /** An existing row, before any event of this batch is applied. */
  load(row: VisitorDayRow): void {
    this.daysOf(row.visitor_id).set(row.day, { ...row });
  }

  apply(visitorId: string, day: string, event: RecordedFields): void {
    const days = this.daysOf(visitorId);
    let row = days.get(day);
    if (!row) {
      row = { website_id: this.websiteId, day, visitor_id: visitorId, pageviews: 0, sessions: 0, last_session_id: null, goals: 0, prev_day: null, prev_goal_day: null };
      days.set(day, row);
      this.created.add(row);
      this.total(day).visitors += 1;
    }
    if (event.type === 'pageview') {
      row.pageviews += 1;
      this.total(day).pageviews += 1;
    }
    if (event.sessionId !== null && event.sessionId !== row.last_session_id) {
      row.sessions += 1;
      row.last_session_id = event.sessionId;
      this.total(day).sessions += 1;
    }
    if (isGoal(event)) {
      if (row.goals === 0) {
        this.converted.add(row);
        this.total(day).converted_visitors += 1;
      }
      row.goals += 1;
    }
    this.changed.add(row);
  }

  /** Visitors whose links may change: a new active day or a new converting day. */
  visitorsToRelink(): string[] {
    const out = new Set<string>();
    for (const row of this.created) out.add(row.visitor_id);
    for (const row of this.converted) out.add(row.visitor_id);
    return [...out];
  }

  /**
   * Recomputes the visitor's links over the rows held, the first of which follows
   * `lastDayBefore` / `lastGoalDayBefore` (the visitor's latest days before them, if any).
   */
  relink(visitorId: string, lastDayBefore: string | null, lastGoalDayBefore: string | null): void {
    const days = this.byVisitor.get(visitorId);
    if (!days) return;
    let prev = lastDayBefore;
    let prevGoal = lastGoalDayBefore;
    for (const day of [...days.keys()].sort()) {
      const row = days.get(day)!;
      if (this.created.has(row) || row.prev_day !== prev) {
        if (!this.created.has(row)) this.count(day, row.prev_day).visitors -= 1;
        this.count(day, prev).visitors += 1;
        row.prev_day = prev;
        this.changed.add(row);
      }
      prev = day;
      if (row.goals === 0) continue;
      if (this.converted.has(row) || row.prev_goal_day !== prevGoal) {
        if (!this.converted.has(row)) this.count(day, row.prev_goal_day).converted -= 1;
        this.count(day, prevGoal).converted += 1;
        row.prev_goal_day = prevGoal;
        this.changed.add(row);
      }
      prevGoal = day;
    }
  }

  relinkAll(): void {
    for (const visitorId of this.byVisitor.keys()) this.relink(visitorId, null, null);
  }

  changedRows(): VisitorDayRow[] {
    return [...this.changed];
  }

  totalsDeltas(): DayTotalsDelta[] {
    return [...this.totals.values()];
  }

  recencyDeltas(): RecencyDelta[] {
    return [...this.recency.values()].filter((delta) => delta.visitors !== 0 || delta.converted !== 0);
  }

  private daysOf(visitorId: string): Map<string, VisitorDayRow> {
    let days = this.byVisitor.get(visitorId);
    if (!days) {
      days = new Map();
      this.byVisitor.set(visitorId, days);
    }
    return days;
  }

  private total(day: string): DayTotalsDelta {
    let total = this.totals.get(day);
    if (!total) {
      total = { day, visitors: 0, sessions: 0, pageviews: 0, converted_visitors: 0 };
      this.totals.set(day, total);
    }
    return total;
  }

  private count(day: string, prev: string | null): RecencyDelta {
    const prevDay = prev ?? '';
    const key = `${day}|${prevDay}`;
    let delta = this.recency.get(key);
    if (!delta) {
      delta = { day, prev_day: prevDay, visitors: 0, converted: 0 };
      this.recency.set(key, delta);
    }
    return delta;
  }
}
