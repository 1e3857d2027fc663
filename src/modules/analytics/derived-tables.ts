import type { Database } from '../../db/schema.ts';
import { dependencyOrder } from '../../lib/dependency-order.ts';

// The catalogue of the relational store's derived tables: every table whose rows are a function
// of a website's raw events and payments, what each is derived from, what it groups by, whether
// its rows follow the website's time zone (and so move when it changes: day-relocation.ts), and
// which reads it answers. Everything else follows from it: the planner sends each read to the
// first available table that declares it answers it (src/modules/stats/read-planner.ts); the
// derivations that keep the tables (derivations.ts) run through one maintainer (maintainer.ts)
// in the order of `from`; the website deletion, the tests' oracle (a rebuild from the raw events
// compared with what the writers keep, test/helpers/derived-tables.ts) and the catalogue test
// (every table with a website_id is a record, a queue or declared here; every declared table has
// its derivation and every change it depends on a hook) read it, so a new derived table cannot be
// left out of any of them.

export type DerivedTableName = keyof Database &
  (
    | 'visitor_days'
    | 'daily_totals'
    | 'visitor_recency'
    | 'visitor_hours'
    | 'hour_totals'
    | 'hour_recency'
    | 'sessions'
    | 'session_buckets'
    | 'visitor_totals'
    | 'profile_totals'
    | 'breakdown_visitors'
    | 'breakdown_totals'
    | 'breakdown_profiles'
    | 'breakdown_days'
    | 'breakdown_last_days'
    | 'breakdown_profile_days'
    | 'breakdown_profile_last_days'
    | 'breakdown_revenue'
    | 'breakdown_profile_revenue'
    | 'funnel_visitor_days'
    | 'funnel_crossings'
    | 'goal_stats'
    | 'goal_visitors'
  );

/** The website API's reads the planner routes (src/modules/stats/read-planner.ts). */
export const PLANNED_READS = ['overview', 'breakdown', 'series', 'visitor-list', 'funnel', 'realtime'] as const;
export type PlannedRead = (typeof PLANNED_READS)[number];

/**
 * A read's range as the derived data sees it: all time, whole local days of the website's own
 * zone (all time included), hours that begin and end on whole UTC hours but for the range's own
 * first and last (an hourly series in any zone whose offset is whole hours), from an instant up
 * to now (the realtime reads: whoever's latest event is since), or anything else (instants, an
 * hourly series in a zone with a half-hour or 45-minute offset, days of another zone).
 */
export type RangeShape = 'all-time' | 'whole-days' | 'whole-hours' | 'up-to-now' | 'instants';
/** A read's filters as the derived data sees them: none, only visitor attributes (visitor-attributes.ts), or any. */
export type FilterShape = 'none' | 'visitor-attributes' | 'any';

/** A shape of read a derived table answers. */
export interface Answer {
  read: PlannedRead;
  /** 'whole-days' answers all time as well (every day); 'whole-hours' and 'up-to-now' answer only ranges of that shape. */
  range: 'all-time' | 'whole-days' | 'whole-hours' | 'up-to-now';
  filters: 'none' | 'visitor-attributes';
  /** Other derived tables its reader reads besides: all must be available. */
  with?: readonly DerivedTableName[];
  /**
   * It needs the newest events in the rows: not while a build runs, even from a table kept
   * per visitor (whose visitors not yet built lack the events since the build began).
   */
  fresh?: true;
}

export interface DerivedTable {
  name: DerivedTableName;
  /** What its rows are computed from. */
  from: readonly ('events' | 'payments' | 'visitor_profiles' | DerivedTableName)[];
  /** Its key: one row per distinct value of these columns. */
  groupBy: readonly string[];
  /** Its rows hold local days of the website's zone: a change of zone moves them (day-relocation.ts). */
  localDays: boolean;
  /** What its rows are, in words. */
  holds: string;
  /**
   * The reads it answers without the raw events, in the planner's terms (src/modules/stats/
   * read-planner.ts): a read of that shape goes to the first declared table that answers it and
   * is available, or else to the raw events.
   */
  answers?: readonly Answer[];
  /**
   * Rows the writers may leave at zero where a rebuild has none (a count that fell back to zero):
   * a condition, over the table's columns, that a row carries data. Comparisons keep only those.
   */
  nonZero?: readonly string[];
  /**
   * Kept in the transaction that acknowledges the event (the goal statistics, which alerts and the
   * goals list read at once), not by the rollup deriver: a build (derived-build.ts) leaves it alone.
   */
  keptAtIngestion?: true;
  /**
   * A build (derived-build.ts) replaces its rows visitor by visitor, each in its visitor's chunk,
   * instead of clearing them all first: the reads that have no other source (bounce rates and
   * durations, the visitor list) keep answering from the rows as they were. session_buckets
   * follows sessions by triggers, so it stays too.
   */
  replacedPerVisitor?: true;
}

export const DERIVED_TABLES: readonly DerivedTable[] = [
  { name: 'visitor_days', from: ['events'], groupBy: ['website_id', 'day', 'visitor_id'], localDays: true, holds: 'per visitor and local day: the links daily_totals and visitor_recency sum' },
  { name: 'daily_totals', from: ['visitor_days'], groupBy: ['website_id', 'day'], localDays: true, holds: 'day, week and month series; overview counts over whole days', answers: [{ read: 'overview', range: 'whole-days', filters: 'none', with: ['visitor_recency', 'session_buckets'] }, { read: 'series', range: 'whole-days', filters: 'none', with: ['visitor_recency'] }] },
  { name: 'visitor_recency', from: ['visitor_days'], groupBy: ['website_id', 'day', 'prev_day'], localDays: true, holds: 'distinct visitors and converted visitors over several whole days' },
  {
    name: 'visitor_hours',
    from: ['events'],
    groupBy: ['website_id', 'visitor_id', 'hour'],
    localDays: false,
    holds: 'per visitor and UTC hour: the links hour_totals and hour_recency sum',
  },
  { name: 'hour_totals', from: ['visitor_hours'], groupBy: ['website_id', 'hour'], localDays: false, holds: 'hourly series', nonZero: ['visitors'], answers: [{ read: 'series', range: 'whole-hours', filters: 'none', with: ['hour_recency', 'visitor_hours'] }] },
  { name: 'hour_recency', from: ['visitor_hours'], groupBy: ['website_id', 'hour', 'prev_hour'], localDays: false, holds: 'distinct visitors and converted visitors over several UTC hours', nonZero: ['visitors', 'converted'] },
  { name: 'sessions', from: ['events'], groupBy: ['website_id', 'session_id'], localDays: false, holds: 'bounce rate, durations, entry and exit pages, sources; filtered reads join it', replacedPerVisitor: true },
  { name: 'session_buckets', from: ['sessions'], groupBy: ['website_id', 'bucket'], localDays: false, holds: 'unfiltered session counts, bounces and durations over whole 15-minute slots', nonZero: ['sessions', 'bounces', 'millis'], replacedPerVisitor: true },
  // Before visitor_totals: the planner asks it first for the filtered visitor list (its total from the sums per profile), and visitor_totals alone while a build has cleared it.
  {
    name: 'profile_totals',
    from: ['visitor_totals'],
    groupBy: ['website_id', 'profile'],
    localDays: false,
    holds: 'all-time overview counts per visitor profile; the filtered visitor list\'s total',
    answers: [
      { read: 'overview', range: 'all-time', filters: 'visitor-attributes', with: ['visitor_totals'] },
      { read: 'visitor-list', range: 'all-time', filters: 'visitor-attributes', with: ['visitor_totals'] },
    ],
  },
  { name: 'visitor_totals', from: ['events', 'sessions'], groupBy: ['website_id', 'visitor_id'], localDays: false, holds: 'the visitor list and page, first and last visits, attributes; who is online (latest event since a moment)', answers: [{ read: 'visitor-list', range: 'all-time', filters: 'none' }, { read: 'visitor-list', range: 'all-time', filters: 'visitor-attributes' }, { read: 'realtime', range: 'up-to-now', filters: 'none', fresh: true }], replacedPerVisitor: true },
  { name: 'breakdown_visitors', from: ['events', 'sessions'], groupBy: ['website_id', 'visitor_id', 'breakdown', 'key'], localDays: true, holds: "per visitor and key: what breakdown_totals sums, and each visitor's last day under the key" },
  { name: 'breakdown_totals', from: ['breakdown_visitors'], groupBy: ['website_id', 'breakdown', 'key'], localDays: false, holds: 'all-time breakdowns', answers: [{ read: 'breakdown', range: 'all-time', filters: 'none', with: ['breakdown_revenue'] }] },
  { name: 'breakdown_profiles', from: ['breakdown_visitors', 'visitor_totals'], groupBy: ['website_id', 'breakdown', 'key', 'profile'], localDays: false, holds: 'all-time breakdowns filtered by visitor attributes', answers: [{ read: 'breakdown', range: 'all-time', filters: 'visitor-attributes', with: ['breakdown_profile_revenue', 'visitor_totals'] }] },
  { name: 'breakdown_days', from: ['events', 'sessions'], groupBy: ['website_id', 'breakdown', 'day', 'key'], localDays: true, holds: 'pageviews and events of breakdowns over whole days', answers: [{ read: 'breakdown', range: 'whole-days', filters: 'none', with: ['breakdown_last_days', 'breakdown_visitors'] }] },
  { name: 'breakdown_last_days', from: ['breakdown_visitors'], groupBy: ['website_id', 'breakdown', 'day', 'key'], localDays: true, holds: 'distinct visitors of breakdowns over whole days up to the latest', nonZero: ['visitors'] },
  {
    name: 'breakdown_profile_days',
    from: ['events', 'sessions', 'visitor_totals'],
    groupBy: ['website_id', 'breakdown', 'day', 'key', 'profile'],
    localDays: true,
    holds: "per key, day and profile: events by their own profile, steady visitors' sessions by theirs; filtered breakdowns and overview over whole days",
    answers: [{ read: 'breakdown', range: 'whole-days', filters: 'visitor-attributes', with: ['breakdown_profile_last_days', 'breakdown_last_days', 'breakdown_visitors', 'visitor_totals'] }],
  },
  {
    name: 'breakdown_profile_last_days',
    from: ['breakdown_visitors', 'visitor_totals'],
    groupBy: ['website_id', 'breakdown', 'day', 'key', 'profile'],
    localDays: true,
    holds: 'steady visitors per key and profile by their last day under the key: filtered distinct visitors over whole days up to the latest',
    nonZero: ['visitors'],
    answers: [{ read: 'overview', range: 'whole-days', filters: 'visitor-attributes', with: ['breakdown_profile_days', 'breakdown_last_days', 'breakdown_visitors', 'visitor_totals', 'sessions'] }],
  },
  { name: 'breakdown_revenue', from: ['breakdown_visitors', 'payments'], groupBy: ['website_id', 'breakdown', 'key', 'currency', 'converted_currency', 'renewal'], localDays: false, holds: 'revenue of all-time breakdowns', nonZero: ['minor', 'converted_minor'] },
  { name: 'breakdown_profile_revenue', from: ['breakdown_profiles', 'payments'], groupBy: ['website_id', 'breakdown', 'key', 'profile', 'currency', 'converted_currency', 'renewal'], localDays: false, holds: 'revenue of all-time breakdowns by visitor attributes', nonZero: ['minor', 'converted_minor'] },
  {
    name: 'funnel_visitor_days',
    from: ['events'],
    groupBy: ['website_id', 'funnel_id', 'visitor_id', 'day'],
    localDays: true,
    holds: "per stored funnel, visitor and local day: the day's transition, where it changes anything (funnel-crossings.ts)",
  },
  {
    name: 'funnel_crossings',
    from: ['funnel_visitor_days'],
    groupBy: ['website_id', 'funnel_id', 'start_day', 'after_day', 'day', 'depth'],
    localDays: true,
    holds: "per stored funnel: visitors by the interval of range starts, the day and the depth they first reach; a stored funnel's report over local days, its cut first and last days per visitor",
    nonZero: ['visitors'],
    answers: [{ read: 'funnel', range: 'whole-days', filters: 'none', with: ['funnel_visitor_days'] }],
  },
  { name: 'goal_stats', from: ['events'], groupBy: ['website_id', 'goal_name'], localDays: false, holds: 'the goals list: completions, visitors, last completion', keptAtIngestion: true },
  { name: 'goal_visitors', from: ['events'], groupBy: ['website_id', 'goal_name', 'visitor_id'], localDays: false, holds: "goal_stats' distinct visitors", keptAtIngestion: true },
];

/** The derived tables whose rows follow the website's time zone. */
export const LOCAL_DAY_TABLES = DERIVED_TABLES.filter((table) => table.localDays).map((table) => table.name);

/**
 * The tables the rollup deriver keeps, each after every table it is derived from: the order a
 * build clears them in (derived-build.ts), so a sum is cleared after the rows it follows.
 */
export const BUILT_TABLES: readonly DerivedTable[] = (() => {
  const kept = DERIVED_TABLES.filter((table) => !table.keptAtIngestion);
  const needs = (table: DerivedTable) => kept.filter((other) => table.from.includes(other.name));
  return dependencyOrder(kept, needs, 'derived-tables.ts: the derived tables');
})();
