import { type Kysely, sql } from 'kysely';
import { engineOf } from '../../db/engine.ts';
import { sqlList } from '../../db/prepared.ts';
import type { Database } from '../../db/schema.ts';
import { chunks } from '../../lib/chunks.ts';
import { VISITOR_ATTRIBUTES } from './visitor-attributes.ts';
import { profileJson } from './breakdown-profiles.ts';

// Keeps profile_totals: per website and visitor profile (as in breakdown_profiles), the sums of
// the visitor_totals rows of the visitors whose attributes never varied: visitors, pageviews,
// converted visitors, sessions, bounces and session milliseconds, what the overview counts. The
// overview filtered on visitor attributes alone, all time, sums the matching profiles and reads
// only the varied visitors' raw events and sessions (../stats/sql/overview-sql.ts).
//
// A visitor has one row in visitor_totals, so each writer takes the visitors it touches out of
// their profiles as visitor_totals holds them before it writes, and puts them back as it holds
// them after: ingestion around the batch's updates of visitor_totals and sessions, a server-goal
// delete around its repairs. The rebuild derives a website's rows from visitor_totals.

const VISITORS_PER_STATEMENT = 500;

const GROUP = sql.raw(['v.website_id', ...VISITOR_ATTRIBUTES.map((a) => `v.${a}`)].join(', '));

/** Adds (1) or takes out (-1) these visitors' rows of visitor_totals, where steady now, to their profiles. */
async function moveVisitors(db: Kysely<Database>, websiteId: string, visitorIds: string[], sign: 1 | -1): Promise<void> {
  const profile = profileJson(engineOf(db), 'v');
  const n = sql.lit(sign);
  for (const chunk of chunks([...new Set(visitorIds)], VISITORS_PER_STATEMENT)) {
    const steady = sql`visitor_totals v where v.website_id = ${websiteId} and v.visitor_id in (${sqlList(chunk)}) and v.varied = 0`;
    await sql`insert into profile_totals (website_id, profile, visitors, pageviews, converted, sessions, bounces, millis)
      select v.website_id, ${profile}, ${n} * count(*), ${n} * sum(v.pageviews), ${n} * sum(case when v.goals > 0 then 1 else 0 end),
        ${n} * sum(v.sessions), ${n} * sum(v.bounces), ${n} * sum(v.millis)
      from ${steady} group by ${GROUP}
      on conflict (website_id, profile) do update set
        visitors = profile_totals.visitors + excluded.visitors,
        pageviews = profile_totals.pageviews + excluded.pageviews,
        converted = profile_totals.converted + excluded.converted,
        sessions = profile_totals.sessions + excluded.sessions,
        bounces = profile_totals.bounces + excluded.bounces,
        millis = profile_totals.millis + excluded.millis`.execute(db);
    if (sign < 0) {
      await sql`delete from profile_totals where website_id = ${websiteId} and visitors <= 0
        and profile in (select ${profile} from ${steady})`.execute(db);
    }
  }
}

/** These visitors leave their profiles' totals as visitor_totals holds them now (before a writer changes them). */
export const profileTotalsOut = (db: Kysely<Database>, websiteId: string, visitorIds: string[]) => moveVisitors(db, websiteId, visitorIds, -1);

/** These visitors join their profiles' totals as visitor_totals holds them now (after a writer changed them). */
export const profileTotalsIn = (db: Kysely<Database>, websiteId: string, visitorIds: string[]) => moveVisitors(db, websiteId, visitorIds, 1);

/** The visitors of a batch of events, per website. */
export function visitorsByWebsite(events: { websiteId: string; visitorId: string }[]): Map<string, string[]> {
  const byWebsite = new Map<string, Set<string>>();
  for (const { websiteId, visitorId } of events) {
    const visitors = byWebsite.get(websiteId) ?? new Set<string>();
    byWebsite.set(websiteId, visitors.add(visitorId));
  }
  return new Map([...byWebsite].map(([websiteId, visitors]) => [websiteId, [...visitors]]));
}

/** Replaces a website's rows with ones derived from its visitor_totals (so rebuild that first). */
export async function rebuildProfileTotals(db: Kysely<Database>, websiteId: string): Promise<void> {
  await sql`delete from profile_totals where website_id = ${websiteId}`.execute(db);
  await sql`insert into profile_totals (website_id, profile, visitors, pageviews, converted, sessions, bounces, millis)
    select v.website_id, ${profileJson(engineOf(db), 'v')}, count(*), sum(v.pageviews), sum(case when v.goals > 0 then 1 else 0 end),
      sum(v.sessions), sum(v.bounces), sum(v.millis)
    from visitor_totals v where v.website_id = ${websiteId} and v.varied = 0 group by ${GROUP}`.execute(db);
}
