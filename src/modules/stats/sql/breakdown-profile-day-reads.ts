import { type Kysely, type RawBuilder, sql } from 'kysely';
import { engineOf, isPostgres } from '../../../db/engine.ts';
import type { Database } from '../../../db/schema.ts';
import type { MoneyRules } from '../event-store.ts';
import type { Breakdown } from '../../analytics/breakdowns.ts';
import { BREAKDOWN_SPECS } from '../../analytics/breakdown-specs.ts';
import { keyJson } from '../../analytics/breakdown-keys.ts';
import type { PageRequest, StatsScope } from '../stats.params.ts';
import { keyNames, keyOf, storedKeyOrder } from './breakdown-keys-sql.ts';
import { daysReach, keyedByName, rankedDayRows } from './breakdown-rollup-reads.ts';
import { paymentScope } from './overview-sql.ts';
import { num } from './scope-sql.ts';
import { paidMinor } from './money-sql.ts';
import { profileFilters, steadyAndPassing } from './steady-split-sql.ts';
import type { Engine } from '../../../db/database.ts';

// An event breakdown filtered on visitor attributes alone over whole local days of the website up
// to its latest data (issue 39 item 2), from the day rollups by profile (kept by
// src/modules/analytics/breakdown-profile-days.ts):
// - pageviews and events: the sums of breakdown_profile_days over the range's days and the
//   profiles the filters match. Its profiles are the events' own attribute values, which are what
//   the filters test, so these are exact for every visitor;
// - visitors: the steady visitors from breakdown_profile_last_days (those whose last day under the
//   key is in the range, of the matching profiles), plus the varied visitors counted from their
//   raw events in scope (few: visitor_totals' partial index finds them); the two are disjoint.
// A session breakdown reads the steady visitors' sessions from breakdown_profile_days (by visitor
// profile) and the varied visitors' sessions raw. The varied visitors' raw rows are read through
// the visitor index (on SQLite the range's or the event type's index would walk every event of
// the range: 1.1 s for the pages at a million events). A range that ends before the latest data,
// or all time: the reader gives up and the next source answers (the raw read, or
// breakdown_profiles all time).

/** Local days first..last of the website, both included. */
export interface Days {
  first: string;
  last: string;
}

/**
 * `select profile ...`: the profiles of the range's events that pass the scope's filters. The
 * countries breakdown has one key per event and its country in the profile, so its rows over the
 * range are at most one per day and profile: the filters are tested on those few rows, and the
 * reads take the matching profiles' rows by equality (testing the filters on every row of a large
 * breakdown such as the pages took most of its time, the JSON parsed once a row on PostgreSQL).
 */
export function matchingProfiles(engine: Engine, scope: StatsScope, days: Days): RawBuilder<unknown> {
  return sql`select distinct m.profile from breakdown_profile_days m
    where m.website_id = ${scope.websiteId} and m.breakdown = ${EVERY_EVENT} and m.day >= ${days.first} and m.day <= ${days.last}
      and ${profileFilters(engine, scope, sql.ref('m.profile'))}`;
}

/**
 * `p.profile` among the matching profiles (`mp`, a CTE of matchingProfiles, or its select).
 * PostgreSQL, which estimates one matching profile, planned `in` as a loop over the range's rows
 * per profile (32 ms for the pages at 100,000 events); an array read once is one pass (16 ms).
 */
export const amongProfiles = (db: Kysely<Database>, matching: RawBuilder<unknown>) =>
  isPostgres(db) ? sql`p.profile = any(array(${matching}))` : sql`p.profile in (${matching})`;

/** The event breakdown whose rows by profile count every event once: one key per event, one per steady visitor. */
export const EVERY_EVENT: Breakdown = 'countries';

/**
 * One row per key, sorted as the raw read sorts, or null when the day rollups cannot answer (some
 * visitor's last day under a key of `kind` after `days.last`). `variedWhere` keeps the varied
 * visitors' events (`e`) or sessions (`s`) in scope, as the raw read does. An event breakdown's
 * pageviews and rows are the table's alone (the events' own profiles: every visitor); a session
 * breakdown's are the steady visitors' sessions from the table and the varied ones' read raw.
 */
export async function profileDayRows(db: Kysely<Database>, kind: Breakdown, scope: StatsScope, days: Days, page: PageRequest, variedWhere: RawBuilder<unknown>) {
  if (!(await daysReach(db, kind, scope.websiteId, days.last))) return null;
  const engine = engineOf(db);
  const spec = BREAKDOWN_SPECS[kind];
  const names = keyNames(spec);
  const tieBreak = storedKeyOrder(engine, sql.ref('c.key'), names);
  const profiled = amongProfiles(db, sql`select profile from mp`);
  const bySession = spec.from === 'sessions';
  const alias = bySession ? 's' : 'e';
  const key = keyJson(engine, kind, alias);
  const raw = sql`select ${key} as key, count(distinct ${sql.ref(`${alias}.visitor_id`)}) as visitors,
      ${sql.raw(bySession ? 'sum(s.pageviews)' : "sum(case when e.type = 'pageview' then 1 else 0 end)")} as pageviews, count(*) as n
    from ${sql.raw(bySession ? 'sessions s' : isPostgres(db) ? 'events e' : 'events e indexed by events_website_visitor_idx')} where ${variedWhere} group by ${key}`;
  const keyed = sql`with mp as (${matchingProfiles(engine, scope, days)}),
    varied as (${raw}),
    v as (
      select x.key, sum(x.visitors) as visitors from (
        select p.key, sum(p.visitors) as visitors from breakdown_profile_last_days p
        where p.website_id = ${scope.websiteId} and p.breakdown = ${kind} and p.day >= ${days.first} and ${profiled}
        group by p.key
        union all
        select r.key, r.visitors from varied r) x
      group by x.key),
    c as (
      select y.key, sum(y.pageviews) as pageviews, sum(y.events) as events from (
        select p.key, sum(p.pageviews) as pageviews, sum(p.events) as events from breakdown_profile_days p
        where p.website_id = ${scope.websiteId} and p.breakdown = ${kind} and p.day >= ${days.first} and p.day <= ${days.last} and ${profiled}
        group by p.key
        union all
        select r.key, r.pageviews, r.n from varied r where ${sql.lit(bySession ? 1 : 0)} = 1) y
      group by y.key)`;
  return rankedDayRows(db, keyed, names, tieBreak, page);
}

/**
 * What each key's steady matching visitors paid in the range: the payments of the steady visitors
 * who pass the filters, under each key whose last day for them is `days.first` or later (they
 * have an event under it in the range). The varied visitors' payments are the raw read's.
 */
export async function steadyProfileDayRevenue(db: Kysely<Database>, kind: Breakdown, scope: StatsScope, days: Days, money: MoneyRules): Promise<Map<string, number>> {
  const names = keyNames(BREAKDOWN_SPECS[kind]);
  const { rows } = await sql<{ key: string; minor: unknown }>`
    select t.key, sum(${paidMinor(money)}) as minor
    from payments p cross join visitor_totals v cross join breakdown_visitors t
    where ${paymentScope({ ...scope, filters: [] }, money)}
      and v.website_id = p.website_id and v.visitor_id = p.visitor_id and ${steadyAndPassing(scope, 'v')}
      and t.website_id = p.website_id and t.visitor_id = p.visitor_id and t.breakdown = ${kind} and t.last_day >= ${days.first}
    group by t.key`.execute(db);
  return new Map(rows.map((row) => [keyOf(keyedByName(names, row.key), names), num(row.minor)]));
}
