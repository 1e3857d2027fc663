import type pg from 'pg';
import { PLAUSIBLE_TABLES, type PlausibleTable } from './plausible-csv.ts';
import { IMPORTED_DIRECT, browserName, deviceName, regionCode, sourceName, systemName } from './umami-names.ts';

// Umami's raw rows of some local days, aggregated in Umami's own PostgreSQL into the daily rows
// of the imported_* tables the Plausible import fills, with Umami's own definitions (its
// src/queries/sql/getWebsiteStats.ts): a page view is a website_event of event_type 1, a visitor a
// session_id, a visit a visit_id, a bounce a visit of one page view, a visit's duration the
// whole seconds from its first to its last page view. Everything is per local day of the
// Sightline website's time zone; a visit that crosses midnight counts on each of its days, as
// Umami counts it in a one-day range. docs/decisions.md maps every column.

export interface AggregateRow {
  day: string;
  values: Record<string, string | number>;
}

export type Aggregates = Record<PlausibleTable, AggregateRow[]>;

export interface UmamiSpan {
  websiteId: string;
  /** The first instant read, and the instant after the last (local midnights, as UTC). */
  from: Date;
  until: Date;
  timeZone: string;
}

/** Page views of the span, each with its local day. */
const PAGEVIEWS = `
  pv as (
    select e.event_id, e.session_id, e.visit_id, e.created_at, e.url_path, coalesce(e.hostname, '') as hostname,
           e.referrer_domain, e.utm_source, e.utm_medium, e.utm_campaign, e.utm_content, e.utm_term,
           to_char(e.created_at at time zone $4, 'YYYY-MM-DD') as day
      from website_event e
     where e.website_id = $1::uuid and e.created_at >= $2 and e.created_at < $3 and e.event_type = 1
  )`;

/** One row per visit and day: its page views, duration, entry and exit page, and its entry's referrer and campaign. */
const VISITS = `
  ${PAGEVIEWS},
  visits as (
    select day, session_id, visit_id, count(*) as pageviews,
           floor(extract(epoch from max(created_at) - min(created_at)))::bigint as duration,
           (array_agg(url_path order by created_at, event_id))[1] as entry_page,
           (array_agg(url_path order by created_at desc, event_id desc))[1] as exit_page,
           (array_agg(hostname order by created_at, event_id))[1] as hostname,
           (array_agg(referrer_domain order by created_at, event_id))[1] as referrer_domain,
           (array_agg(utm_source order by created_at, event_id))[1] as utm_source,
           (array_agg(utm_medium order by created_at, event_id))[1] as utm_medium,
           (array_agg(utm_campaign order by created_at, event_id))[1] as utm_campaign,
           (array_agg(utm_content order by created_at, event_id))[1] as utm_content,
           (array_agg(utm_term order by created_at, event_id))[1] as utm_term
      from pv
     group by day, session_id, visit_id
  )`;

/**
 * The seven tables made of visits (visitors, sources, entry and exit pages, locations, devices,
 * browsers, systems) in one pass: the visits of the span are computed once and grouped by each
 * table's keys (grouping sets); `grouping(...)` says which table a row belongs to.
 */
const VISIT_TABLES = `
  with ${VISITS},
  vs as (select v.*, s.country, s.region, s.device, s.browser, s.os from visits v left join session s on s.session_id = v.session_id)
  select day, referrer_domain, hostname, utm_source, utm_medium, utm_campaign, utm_content, utm_term, entry_page, exit_page,
         country, region, device, browser, os,
         grouping(referrer_domain) as in_sources, grouping(entry_page) as in_entry, grouping(exit_page) as in_exit,
         grouping(country) as in_locations, grouping(device) as in_devices, grouping(browser) as in_browsers, grouping(os) as in_systems,
         count(distinct session_id) as visitors, count(*) as visits, sum(duration) as visit_duration,
         sum(case when pageviews = 1 then 1 else 0 end) as bounces, sum(pageviews) as pageviews
    from vs
   group by grouping sets (
     (day),
     (day, referrer_domain, hostname, utm_source, utm_medium, utm_campaign, utm_content, utm_term),
     (day, entry_page),
     (day, exit_page),
     (day, country, region),
     (day, device),
     (day, browser),
     (day, os))`;

/** The table a row of VISIT_TABLES belongs to: the one whose key column it was grouped by (grouping() = 0). */
function visitTableOf(row: Raw): PlausibleTable {
  if (Number(row.in_sources) === 0) return 'imported_sources';
  if (Number(row.in_entry) === 0) return 'imported_entry_pages';
  if (Number(row.in_exit) === 0) return 'imported_exit_pages';
  if (Number(row.in_locations) === 0) return 'imported_locations';
  if (Number(row.in_devices) === 0) return 'imported_devices';
  if (Number(row.in_browsers) === 0) return 'imported_browsers';
  if (Number(row.in_systems) === 0) return 'imported_operating_systems';
  return 'imported_visitors';
}

/** The tables read by queries of their own: pages (per page view) and custom events. */
const OWN_QUERIES = {
  imported_pages: `
    with ${PAGEVIEWS},
    timed as (
      select pv.*, lead(created_at) over (partition by day, session_id, visit_id order by created_at, event_id) as next_at from pv
    )
    select day, hostname, url_path as page, count(distinct session_id) as visitors, count(distinct visit_id) as visits, count(*) as pageviews,
           sum(case when next_at is null then 1 else 0 end) as exits,
           coalesce(sum(floor(extract(epoch from next_at - created_at))), 0)::bigint as time_on_page
      from timed group by day, hostname, url_path`,
  imported_custom_events: `
    select to_char(e.created_at at time zone $4, 'YYYY-MM-DD') as day, e.event_name as name,
           count(distinct e.session_id) as visitors, count(*) as events
      from website_event e
     where e.website_id = $1::uuid and e.created_at >= $2 and e.created_at < $3 and e.event_type = 2 and coalesce(e.event_name, '') <> ''
     group by 1, 2`,
} as const;

type Raw = Record<string, string | number | null>;

const text = (value: unknown): string => (value === null || value === undefined ? '' : String(value));
const count = (value: unknown): number => (value === null || value === undefined ? 0 : Number(value));

const SESSION_METRICS = ['visitors', 'visits', 'visit_duration', 'bounces', 'pageviews'] as const;

/** Each raw row as the imported table's keys and metrics (names mapped to Sightline's). */
const SHAPES: Record<PlausibleTable, (row: Raw) => Record<string, string | number>> = {
  imported_visitors: (row) => metrics(row, ['visitors', 'pageviews', 'bounces', 'visits', 'visit_duration']),
  imported_sources: (row) => {
    const source = sourceName(row.referrer_domain === null ? null : String(row.referrer_domain), text(row.hostname));
    return {
      source,
      referrer: source === IMPORTED_DIRECT ? '' : text(row.referrer_domain),
      utm_source: text(row.utm_source),
      utm_medium: text(row.utm_medium),
      utm_campaign: text(row.utm_campaign),
      utm_content: text(row.utm_content),
      utm_term: text(row.utm_term),
      ...metrics(row, SESSION_METRICS),
    };
  },
  imported_pages: (row) => ({ hostname: text(row.hostname), page: text(row.page), ...metrics(row, ['visitors', 'visits', 'pageviews', 'exits', 'time_on_page']) }),
  imported_entry_pages: (row) => ({ entry_page: text(row.entry_page), ...metrics({ ...row, entrances: row.visits ?? null }, ['visitors', 'entrances', 'visit_duration', 'bounces', 'pageviews']) }),
  imported_exit_pages: (row) => ({ exit_page: text(row.exit_page), ...metrics({ ...row, exits: row.visits ?? null }, ['visitors', 'visit_duration', 'exits', 'bounces', 'pageviews']) }),
  imported_custom_events: (row) => ({ name: text(row.name), link_url: '', path: '', ...metrics(row, ['visitors', 'events']) }),
  // Umami's city is a name; the imported table's city is Plausible's GeoNames id, so it is left empty.
  imported_locations: (row) => ({ country: text(row.country), region: regionCode(row.country as string | null, row.region as string | null), city: '', ...metrics(row, SESSION_METRICS) }),
  imported_devices: (row) => ({ device: deviceName(row.device as string | null), ...metrics(row, SESSION_METRICS) }),
  imported_browsers: (row) => ({ browser: browserName(row.browser as string | null), browser_version: '', ...metrics(row, SESSION_METRICS) }),
  imported_operating_systems: (row) => {
    const system = systemName(row.os as string | null);
    return { operating_system: system.name, operating_system_version: system.version, ...metrics(row, SESSION_METRICS) };
  },
};

function metrics(row: Raw, names: readonly string[]): Record<string, number> {
  return Object.fromEntries(names.map((name) => [name, count(row[name])]));
}

const MAX_KEY_LENGTH = 2048;

/**
 * Rows whose mapped keys coincide (chrome and crios are both Chrome; google.com and google.de both
 * Google) summed into one: a session has one browser, so those sums are exact; two referrers of one
 * visitor on one day count that visitor twice, as Plausible's own imported sources would.
 */
function merged(rows: Record<string, string | number>[], metricNames: Set<string>): Record<string, string | number>[] {
  const byKey = new Map<string, Record<string, string | number>>();
  for (const row of rows) {
    const keys = Object.entries(row).filter(([name]) => !metricNames.has(name));
    const id = JSON.stringify(keys);
    const found = byKey.get(id);
    if (!found) byKey.set(id, { ...row });
    else for (const name of metricNames) found[name] = Number(found[name] ?? 0) + Number(row[name] ?? 0);
  }
  return [...byKey.values()];
}

/** Every table of Plausible's export: Umami's events fill each of them. */
export const AGGREGATE_TABLES: readonly PlausibleTable[] = PLAUSIBLE_TABLES;

/** The span's rows of every imported table, read in the caller's (read-only) transaction. */
export async function aggregateSpan(client: pg.Client, span: UmamiSpan): Promise<{ rows: Aggregates; eventsRead: number; tooLong: number }> {
  const params = [span.websiteId, span.from, span.until, span.timeZone];
  const raw = Object.fromEntries(AGGREGATE_TABLES.map((table) => [table, [] as Raw[]])) as Record<PlausibleTable, Raw[]>;
  for (const row of (await client.query<Raw>(VISIT_TABLES, params)).rows) raw[visitTableOf(row)].push(row);
  for (const [table, query] of Object.entries(OWN_QUERIES) as [PlausibleTable, string][]) raw[table] = (await client.query<Raw>(query, params)).rows;
  const rows = {} as Aggregates;
  let tooLong = 0;
  for (const table of AGGREGATE_TABLES) {
    const shaped = raw[table].map((row) => ({ day: String(row.day), values: SHAPES[table](row) }));
    const metricNames = new Set(shaped[0] ? Object.keys(shaped[0].values).filter((name) => typeof shaped[0]!.values[name] === 'number') : []);
    const byDay = new Map<string, Record<string, string | number>[]>();
    for (const row of shaped) {
      if (Object.values(row.values).some((value) => typeof value === 'string' && value.length > MAX_KEY_LENGTH)) {
        tooLong += 1;
        continue;
      }
      const dayRows = byDay.get(row.day);
      if (dayRows) dayRows.push(row.values);
      else byDay.set(row.day, [row.values]);
    }
    rows[table] = [...byDay].sort(([a], [b]) => (a < b ? -1 : 1)).flatMap(([day, dayRows]) => merged(dayRows, metricNames).map((values) => ({ day, values })));
  }
  const events = await client.query<{ n: string }>(
    'select count(*) as n from website_event where website_id = $1::uuid and created_at >= $2 and created_at < $3 and event_type in (1, 2)',
    [span.websiteId, span.from, span.until],
  );
  return { rows, eventsRead: Number(events.rows[0]?.n ?? 0), tooLong };
}
