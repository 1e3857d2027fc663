import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Engine } from '../../db/database.ts';
import { engineOf } from '../../db/engine.ts';
import { sqlList } from '../../db/prepared.ts';
import type { Database } from '../../db/schema.ts';
import { chunks } from '../../lib/chunks.ts';
import type { Breakdown } from './breakdowns.ts';
import { profileJson } from './profile-json.ts';
import { countProfileLastDays, moveSessionProfileDays, rebuildProfileLastDays } from './breakdown-profile-days.ts';
import { timezoneOf, visitorsOffsets } from './breakdown-days.ts';
import { visitorsByZone } from './visitor-zones.ts';
import { VISITOR_ATTRIBUTES } from './visitor-attributes.ts';
import { breakdownIn } from './breakdown-rollup-tables.ts';
import { addProfileRevenueOfNewRows, moveProfileRevenueOfVisitors, rebuildProfileRevenue, subtractProfileRevenueOfEmptiedRows } from './breakdown-revenue.ts';

// Keeps breakdown_profiles: per breakdown key and visitor profile (the six visitor attributes of
// visitor-attributes.ts as a JSON array), the sum of the breakdown_visitors rows of the
// visitors whose attributes never varied (visitor_totals.varied = 0): their number under the
// key, pageviews and events. A breakdown filtered on visitor attributes alone, all time, then
// sums the matching profiles instead of reading every matching event, and reads only the varied
// visitors' raw events (../stats/sql/breakdown-profile-reads.ts).
//
// The invariant, kept in the transactions that write breakdown_visitors or visitor_totals:
// - ingestion mirrors each keyed delta it adds to or takes from breakdown_visitors here, for
//   the visitors steady after the batch (visitor_totals is upserted first); a visitor whose batch
//   makes an attribute vary first leaves their profile with every row they had (`leaveProfiles`,
//   before the upsert, while visitor_totals still holds the profile);
// - a server-goal delete takes the touched visitors out before its repairs and puts them back,
//   as repaired, after them;
// - a rebuild derives a website's rows from breakdown_visitors and visitor_totals.

export { profileJson };

const ADD_TO_PROFILES = sql`on conflict (website_id, breakdown, key, profile) do update set
  visitors = breakdown_profiles.visitors + excluded.visitors,
  pageviews = breakdown_profiles.pageviews + excluded.pageviews,
  events = breakdown_profiles.events + excluded.events`;

/** `keyed g` joined to its visitors' visitor_totals rows `v`. */
const KEYED_VISITORS = sql`keyed g join visitor_totals v on v.website_id = g.website_id and v.visitor_id = g.visitor_id`;
/** Grouped by key and profile (`first` is the alias whose website, breakdown and key lead). */
const byKeyAndProfile = (first: string) => sql.raw([`${first}.website_id`, `${first}.breakdown`, `${first}.key`, ...VISITOR_ATTRIBUTES.map((a) => `v.${a}`)].join(', '));

/**
 * Mirrors KEYED_INTO_TOTALS (breakdown-rollup-tables.ts): `keyed` of steady visitors into their
 * profiles, a visitor counting as new to a key while breakdown_visitors has no row for them yet
 * (so it reads that table as it was before `keyed` is added to it).
 */
export const keyedIntoProfiles = (engine: Engine) => sql`insert into breakdown_profiles (website_id, breakdown, key, profile, visitors, pageviews, events)
    select g.website_id, g.breakdown, g.key, ${profileJson(engine, 'v')},
      sum(case when exists (select 1 from breakdown_visitors b where b.website_id = g.website_id
        and b.visitor_id = g.visitor_id and b.breakdown = g.breakdown and b.key = g.key) then 0 else 1 end),
      sum(g.pageviews), sum(g.events)
    from ${KEYED_VISITORS} where v.varied = 0 group by ${byKeyAndProfile('g')}
    ${ADD_TO_PROFILES}`;

/**
 * Mirrors addKeyed: `keyed` of steady visitors joins their profiles, with what they paid (run it
 * before breakdown_visitors' insert).
 */
export async function addKeyedToProfiles(db: Kysely<Database>, keyed: RawBuilder<unknown>): Promise<void> {
  await addProfileRevenueOfNewRows(db, keyed);
  await sql`${keyed} ${keyedIntoProfiles(engineOf(db))}`.execute(db);
}

/**
 * Mirrors KEYED_OUT_OF_TOTALS: `keyed` of steady visitors out of their profiles, a visitor leaving
 * a key with the last of their counts under it (reading breakdown_visitors as it was before
 * `keyed` is taken out of it).
 */
export const keyedOutOfProfiles = (engine: Engine) => sql`insert into breakdown_profiles (website_id, breakdown, key, profile, visitors, pageviews, events)
    select g.website_id, g.breakdown, g.key, ${profileJson(engine, 'v')},
      -sum(case when b.events <= g.events then 1 else 0 end), -sum(g.pageviews), -sum(g.events)
    from ${KEYED_VISITORS} join breakdown_visitors b on b.website_id = g.website_id and b.visitor_id = g.visitor_id
      and b.breakdown = g.breakdown and b.key = g.key
    where v.varied = 0 group by ${byKeyAndProfile('g')}
    ${ADD_TO_PROFILES}`;

/** After keyedOutOfProfiles: the profiles of `keyed`'s keys left with no event go. */
export const PROFILES_EMPTIED = sql`delete from breakdown_profiles where events <= 0
      and (website_id, breakdown, key) in (select website_id, breakdown, key from keyed)`;

/**
 * Mirrors subtractKeyed: `keyed` of steady visitors leaves their profiles, with what they paid
 * (run it before breakdown_visitors is updated).
 */
export async function subtractKeyedFromProfiles(db: Kysely<Database>, keyed: RawBuilder<unknown>): Promise<void> {
  await subtractProfileRevenueOfEmptiedRows(db, keyed);
  await sql`${keyed} ${keyedOutOfProfiles(engineOf(db))}`.execute(db);
  await sql`${keyed} ${PROFILES_EMPTIED}`.execute(db);
}

const VISITORS_PER_STATEMENT = 500;

/** These visitors by the zone their local days are in (two during a move), with that zone's offsets over their events. */
async function zonesOf(db: Kysely<Database>, websiteId: string, visitorIds: string[]) {
  const timezone = await timezoneOf(db, websiteId);
  if (timezone === undefined) return [];
  const { groups } = await visitorsByZone(db, websiteId, timezone, visitorIds);
  const zones = [];
  for (const [zone, ids] of groups) zones.push({ visitorIds: ids, offsets: (await visitorsOffsets(db, websiteId, ids, [zone]))[0]! });
  return zones;
}

/** Adds (1) or takes out (-1) every breakdown_visitors row of these visitors that are steady now. */
async function moveVisitors(db: Kysely<Database>, websiteId: string, visitorIds: string[], sign: 1 | -1): Promise<void> {
  const profile = profileJson(engineOf(db), 'v');
  for (const chunk of chunks([...new Set(visitorIds)], VISITORS_PER_STATEMENT)) {
    await moveProfileRevenueOfVisitors(db, websiteId, chunk, sign);
    await countProfileLastDays(db, sql`website_id = ${websiteId} and visitor_id in (${sqlList(chunk)})`, sign);
    await moveSessionProfileDays(db, websiteId, await zonesOf(db, websiteId, chunk), sign);
    const rows = sql`visitor_totals v join breakdown_visitors b on b.website_id = v.website_id and b.visitor_id = v.visitor_id
      where v.website_id = ${websiteId} and v.visitor_id in (${sqlList(chunk)}) and v.varied = 0`;
    await sql`insert into breakdown_profiles (website_id, breakdown, key, profile, visitors, pageviews, events)
      select b.website_id, b.breakdown, b.key, ${profile}, ${sql.lit(sign)} * count(*), ${sql.lit(sign)} * sum(b.pageviews), ${sql.lit(sign)} * sum(b.events)
      from ${rows} group by ${byKeyAndProfile('b')}
      ${ADD_TO_PROFILES}`.execute(db);
    if (sign < 0) {
      await sql`delete from breakdown_profiles where website_id = ${websiteId} and events <= 0
        and (breakdown, key, profile) in (select b.breakdown, b.key, ${profile} from ${rows})`.execute(db);
    }
  }
}

/** These visitors, as visitor_totals holds them now, leave their profiles with every row they have. */
export const leaveProfiles = (db: Kysely<Database>, websiteId: string, visitorIds: string[]) => moveVisitors(db, websiteId, visitorIds, -1);

/** These visitors, as visitor_totals holds them now, join their profiles with every row they have. */
export const joinProfiles = (db: Kysely<Database>, websiteId: string, visitorIds: string[]) => moveVisitors(db, websiteId, visitorIds, 1);

/**
 * Replaces a website's rows of these breakdowns with ones derived from breakdown_visitors and
 * visitor_totals (so run it after both are rebuilt).
 */
export async function rebuildBreakdownProfiles(db: Kysely<Database>, websiteId: string, kinds: readonly Breakdown[]): Promise<void> {
  await rebuildProfileRevenue(db, websiteId, kinds);
  await rebuildProfileLastDays(db, websiteId, kinds);
  await sql`delete from breakdown_profiles where website_id = ${websiteId} and ${breakdownIn(kinds)}`.execute(db);
  await sql`insert into breakdown_profiles (website_id, breakdown, key, profile, visitors, pageviews, events)
    select b.website_id, b.breakdown, b.key, ${profileJson(engineOf(db), 'v')}, count(*), sum(b.pageviews), sum(b.events)
    from breakdown_visitors b join visitor_totals v on v.website_id = b.website_id and v.visitor_id = b.visitor_id
    where b.website_id = ${websiteId} and ${breakdownIn(kinds)} and v.varied = 0
    group by ${byKeyAndProfile('b')}`.execute(db);
}
