import { sql } from 'kysely';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { type FunnelDay, type StepEvent, dayTransition, firstCrossings, foldTransitions, isIdentity } from '../src/modules/analytics/funnel-transitions.ts';
import type { FunnelStepSpec } from '../src/modules/stats/event-store.ts';
import { rawFunnel, stepCondition } from '../src/modules/stats/sql/funnel-sql.ts';
import { scopeCondition } from '../src/modules/stats/sql/scope-sql.ts';
import type { StatsScope } from '../src/modules/stats/stats.params.ts';
import { analyticsFixture } from './helpers/analytics-fixture.ts';
import { useTestApp, writeAndDerive } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { newEvent } from './helpers/factories.ts';

// The funnel as the composition of per-visitor, per-local-day transitions
// (src/modules/analytics/funnel-transitions.ts) must count, at every step, exactly the visitors
// the raw report counts (rawFunnel, the oracle), over random traffic with ties and repeated
// steps, for ranges of whole local days and ranges that cut their first and last days, in two
// zones. This is the algebra the table kept per stored funnel would rest on.

const MONEY = { currency: 'USD', includeRenewals: true };
const FUNNELS: FunnelStepSpec[][] = [
  [{ type: 'pageview', url: '/pricing' }, { type: 'goal', goalName: 'signup' }],
  [{ type: 'pageview', url: '/a' }, { type: 'pageview', url: '/b' }, { type: 'pageview', url: '/a' }],
  [{ type: 'pageview', url: '/pricing' }, { type: 'pageview', url: '/pricing' }, { type: 'goal', goalName: 'signup' }],
  [{ type: 'goal', goalName: 'signup' }, { type: 'pageview', url: '/b' }, { type: 'goal', goalName: 'signup' }, { type: 'pageview', url: '/pricing' }],
];

describe('day transitions', () => {
  it('complete several steps with one event, and never end shallower from a deeper start', () => {
    // Steps: /p, /p, goal. One /p event completes both page steps; the goal an hour later the third.
    const day = [
      { at: 10, steps: 0b011 },
      { at: 20, steps: 0b100 },
    ];
    expect(dayTransition(day, 3)).toEqual([3, 3, 3]);
    // The goal before the page: from depth 0 it cannot count; entering at depth 2 it does.
    expect(dayTransition([{ at: 5, steps: 0b100 }, { at: 10, steps: 0b011 }], 3)).toEqual([2, 2, 3]);
    expect(foldTransitions([[1, 1], [1, 2]], 2)).toBe(2);
    expect(foldTransitions([[0, 2], [1, 2]], 2)).toBe(1);
    expect(isIdentity([0, 1, 2])).toBe(true);
  });
});

type Db = ReturnType<typeof useTestApp>['db'];

/** The scope's events, per visitor and local day of `timezone`, as the funnel's steps see them. */
async function stepEventsByDay(db: Db, scope: StatsScope, steps: FunnelStepSpec[]): Promise<Map<string, Map<string, StepEvent[]>>> {
  const flags = steps.map((step, i) => sql`case when ${stepCondition(step)} then ${sql.lit(1 << i)} else 0 end`);
  const { rows } = await sql<{ visitor_id: string; occurred_at: unknown; steps: unknown }>`
    select e.visitor_id, e.occurred_at, ${sql.join(flags, sql` + `)} as steps from events e where ${scopeCondition(scope)}`.execute(db);
  const days = new Map<string, Map<string, StepEvent[]>>();
  for (const row of rows) {
    const at = new Date(row.occurred_at as string).getTime();
    const day = DateTime.fromMillis(at, { zone: scope.timezone }).toISODate()!;
    const byDay = days.get(row.visitor_id) ?? days.set(row.visitor_id, new Map()).get(row.visitor_id)!;
    (byDay.get(day) ?? byDay.set(day, []).get(day)!).push({ at, steps: Number(row.steps) });
  }
  return days;
}

/** Steps 1..n reached at depth `depth`, added to `counts`. */
const countDepth = (counts: number[], depth: number, sign = 1) => {
  for (let n = 0; n < depth; n += 1) counts[n]! += sign;
};

describeEachEngine('the funnel as the composition of its day transitions', (engine) => {
  const t = useTestApp(engine);

  async function randomTraffic() {
    const f = await analyticsFixture(t);
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    const start = Date.parse('2026-04-01T00:00:00.000Z');
    const events = [];
    for (let v = 0; v < 120; v += 1) {
      const visitor = `fv-${v}`;
      const count = 1 + Math.floor(random() * 12);
      for (let i = 0; i < count; i += 1) {
        // Some events share an instant (ties); the traffic spans six days.
        const at = new Date(start + Math.floor(random() * 6 * 24 * 4) * 15 * 60_000).toISOString();
        const pick = random();
        const extra =
          pick < 0.25 ? { path: '/pricing' } : pick < 0.45 ? { path: '/a' } : pick < 0.65 ? { path: '/b' } : pick < 0.85 ? { type: 'custom' as const, name: 'signup', path: null } : { path: '/other' };
        events.push(newEvent(f.website.id, visitor, { sessionId: `s-${visitor}-${i}`, hostname: f.website.domain, occurredAt: at, ...extra }));
      }
    }
    await writeAndDerive(t, events);
    return f;
  }

  const RANGES = [
      { from: '2026-04-01T00:00:00.000Z', to: '2026-04-08T00:00:00.000Z' },
      { from: '2026-04-02T04:00:00.000Z', to: '2026-04-05T04:00:00.000Z' },
      { from: '2026-04-02T13:37:00.000Z', to: '2026-04-06T02:15:00.000Z' },
      { from: '2026-04-03T00:00:00.000Z', to: '2026-04-03T18:00:00.000Z' },
  ];

  it('counts every step as the raw report does, whole days and cut ones, in two zones', async () => {
    const f = await randomTraffic();
    const ranges = RANGES;
    // Visitors whose depth grew on a later day than their first (the composition at work), over every case.
    let acrossDays = 0;
    for (const timezone of ['UTC', 'Asia/Tokyo']) {
      for (const range of ranges) {
        const scope: StatsScope = { websiteId: f.website.id, range, timezone, filters: [] };
        for (const steps of FUNNELS) {
          // Per visitor and local day (the range's partial first and last days are its events in range).
          const days = await stepEventsByDay(t.db, scope, steps);
          const reached = steps.map(() => 0);
          for (const byDay of days.values()) {
            const ordered = [...byDay.keys()].sort().map((day) => dayTransition(byDay.get(day)!, steps.length));
            const depth = foldTransitions(ordered, steps.length);
            if (depth > foldTransitions(ordered.slice(0, 1), steps.length)) acrossDays += 1;
            for (let n = 0; n < depth; n += 1) reached[n]! += 1;
          }
          const oracle = await rawFunnel(t.db, scope, steps, MONEY);
          expect(reached, JSON.stringify({ timezone, range, steps })).toEqual(oracle.map((step) => step.visitors));
        }
      }
    }
    expect(acrossDays).toBeGreaterThan(50);
  });

  it('counts every step from the first crossings per range start (rows bounded by days), the cut first and last days read per visitor', async () => {
    const f = await randomTraffic();
    const ALL = { from: '2000-01-01T00:00:00.000Z', to: '2100-01-01T00:00:00.000Z' };
    let corrected = 0;
    for (const timezone of ['UTC', 'Asia/Tokyo']) {
      const calendar = Array.from({ length: 12 }, (_, i) => DateTime.fromISO('2026-03-30', { zone: timezone }).plus({ days: i }).toISODate()!);
      for (const steps of FUNNELS) {
        // What a table kept per funnel would hold: each visitor's whole-day transitions that change anything, ...
        const whole = new Map<string, FunnelDay[]>();
        for (const [visitor, byDay] of await stepEventsByDay(t.db, { websiteId: f.website.id, range: ALL, timezone, filters: [] }, steps)) {
          const kept = [...byDay].map(([day, events]) => ({ day, transition: dayTransition(events, steps.length) })).filter((row) => !isIdentity(row.transition));
          if (kept.length > 0) whole.set(visitor, kept);
        }
        // ... and their sum: visitors per (range start, day, depth first reached).
        const sums = new Map<string, number>();
        for (const days of whole.values()) {
          for (const c of firstCrossings(days, steps.length, calendar)) sums.set(`${c.start}|${c.day}|${c.depth}`, (sums.get(`${c.start}|${c.day}|${c.depth}`) ?? 0) + 1);
        }
        for (const range of RANGES) {
          const scope: StatsScope = { websiteId: f.website.id, range, timezone, filters: [] };
          const local = (iso: string) => DateTime.fromISO(iso, { zone: timezone });
          const first = local(range.from).toISODate()!;
          const last = local(range.to).minus({ milliseconds: 1 }).toISODate()!;
          const cutFirst = !local(range.from).startOf('day').equals(local(range.from));
          const cutLast = !local(range.to).startOf('day').equals(local(range.to));
          const a = cutFirst ? local(range.from).plus({ days: 1 }).toISODate()! : first;
          const b = cutLast ? local(range.to).minus({ days: 1 }).toISODate()! : last;
          const counts = steps.map(() => 0);
          // The whole days: the sums from start a on days up to b.
          for (const day of calendar.filter((d) => d >= a && d <= b)) {
            for (let n = 1; n <= steps.length; n += 1) counts[n - 1]! += sums.get(`${a}|${day}|${n}`) ?? 0;
          }
          // The visitors with events in range on a cut day: their whole-day part out, their true fold in.
          const edges = new Set([...(cutFirst ? [first] : []), ...(cutLast ? [last] : [])]);
          for (const [visitor, byDay] of await stepEventsByDay(t.db, scope, steps)) {
            if (![...byDay.keys()].some((day) => edges.has(day))) continue;
            corrected += 1;
            const interior = (whole.get(visitor) ?? []).filter((row) => row.day >= a && row.day <= b).sort((x, y) => (x.day < y.day ? -1 : 1));
            countDepth(counts, foldTransitions(interior.map((row) => row.transition), steps.length), -1);
            const inRange = [...byDay.keys()].sort().map((day) => dayTransition(byDay.get(day)!, steps.length));
            countDepth(counts, foldTransitions(inRange, steps.length));
          }
          const oracle = await rawFunnel(t.db, scope, steps, MONEY);
          expect(counts, JSON.stringify({ timezone, range, steps })).toEqual(oracle.map((step) => step.visitors));
        }
      }
    }
    expect(corrected).toBeGreaterThan(100);
  });
});
