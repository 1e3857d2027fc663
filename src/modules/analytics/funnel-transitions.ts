// The algebra of a funnel kept per visitor and local day (docs/decisions.md, "The funnel per
// stored funnel"): the raw report (src/modules/stats/sql/funnel-sql.ts) counts at step n the
// visitors with an event matching step n at or after the first time t(n-1) they reached step
// n-1, keeping the first such time; one event may complete several steps at once (a step that
// repeats the one before, or two matching events at the same instant).
//
// A day's transition: for each depth k a visitor enters the day with (reached on an earlier day,
// so every event of the day is at or after it), the depth they leave it with. It depends on the
// day's events alone, so a range of days is the composition of its days' transitions in day
// order, and a range that is not whole days is the same with its partial first and last days
// taken from the raw events in range. Depths only grow, and a deeper start never ends shallower.
//
// Kept per stored funnel (funnel-crossings.ts): the unit the fold, the repairs and the build each
// compute for a visitor-day, tested against the raw report (test/funnel-transitions.test.ts,
// test/funnel-crossings.test.ts).

/** One event as a funnel sees it: its instant (ms) and the steps it matches (bit i: step i + 1). */
export interface StepEvent {
  at: number;
  steps: number;
}

/** The depth reached from `depth` over `events` (in time order), each step at or after the one before. */
function reachFrom(events: readonly StepEvent[], stepCount: number, depth: number): number {
  let since = -Infinity;
  while (depth < stepCount) {
    const bit = 1 << depth;
    const next = events.find((event) => event.at >= since && (event.steps & bit) !== 0);
    if (!next) break;
    since = next.at;
    depth += 1;
  }
  return depth;
}

/**
 * A day's transition: element k is the depth a visitor who entered the day at depth k leaves it
 * with (k = 0 .. stepCount - 1; at the last depth nothing changes). `events` in any order.
 */
export function dayTransition(events: readonly StepEvent[], stepCount: number): number[] {
  const ordered = [...events].sort((a, b) => a.at - b.at);
  return Array.from({ length: stepCount }, (_, k) => reachFrom(ordered, stepCount, k));
}

/** The depth reached over days whose transitions are given in day order, starting at depth 0. */
export function foldTransitions(transitions: readonly (readonly number[])[], stepCount: number): number {
  let depth = 0;
  for (const transition of transitions) {
    if (depth >= stepCount) break;
    depth = transition[depth]!;
  }
  return depth;
}

/** Whether the transition changes nothing (every depth leaves as it entered): no row needs keeping. */
export const isIdentity = (transition: readonly number[]): boolean => transition.every((depth, k) => depth === k);

/** A visitor's day in the funnel: the local day and its transition. */
export interface FunnelDay {
  day: string;
  transition: readonly number[];
}

/** One visitor's first arrival at a depth, for ranges starting on `start`: reached on `day`. */
export interface Crossing {
  start: string;
  day: string;
  depth: number;
}

/**
 * A visitor's crossings for every range start in `starts` (local days, any order): for a range of
 * whole days from `start`, the day they first reach each depth. Summed over visitors per (start,
 * day, depth), they give a range [a, b] of whole days its step counts as the crossings from a on
 * days up to b: rows bounded by days and steps, whatever the visitors (docs/decisions.md).
 */
export function firstCrossings(days: readonly FunnelDay[], stepCount: number, starts: readonly string[]): Crossing[] {
  const ordered = [...days].sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0));
  const found: Crossing[] = [];
  for (const start of starts) {
    let depth = 0;
    for (const { day, transition } of ordered) {
      if (day < start) continue;
      if (depth >= stepCount) break;
      const next = transition[depth]!;
      for (let reached = depth + 1; reached <= next; reached += 1) found.push({ start, day, depth: reached });
      depth = next;
    }
  }
  return found;
}

/** One visitor's crossings for every range start after `afterDay` ('' : none) up to `startDay`: reached `depth` on `day`. */
export interface CrossingInterval {
  afterDay: string;
  startDay: string;
  day: string;
  depth: number;
}

/**
 * A visitor's first crossings for every range start, grouped by the interval of starts they hold
 * for: a range starting on any day after the visitor's previous kept day up to a kept day folds
 * the same days, so `days` (the kept days: transitions that change something) give at most one
 * interval each, instead of one row per start. A report over [a, b] counts at step n the
 * intervals with afterDay < a <= startDay and day <= b of depth n (funnel-crossings.ts).
 */
export function crossingIntervals(days: readonly FunnelDay[], stepCount: number): CrossingInterval[] {
  const ordered = [...days].sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0));
  const found: CrossingInterval[] = [];
  ordered.forEach((from, index) => {
    const afterDay = index === 0 ? '' : ordered[index - 1]!.day;
    for (const crossing of firstCrossings(ordered.slice(index), stepCount, [from.day])) found.push({ afterDay, startDay: from.day, day: crossing.day, depth: crossing.depth });
  });
  return found;
}

/** A transition as its table keeps it ("k0,k1,..."), and back. */
export const transitionText = (transition: readonly number[]): string => transition.join(',');
export const transitionOf = (text: string): number[] => text.split(',').map(Number);
