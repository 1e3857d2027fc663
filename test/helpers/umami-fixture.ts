import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DateTime } from 'luxon';
import pg from 'pg';
import { POSTGRES_URL } from './engines.ts';

// A real Umami 3.x database for the import's tests: a fresh database on the shared PostgreSQL
// (umami_fixture_<pid>_<n>), made with Umami's schema (test/fixtures/umami), filled with known
// sessions and events as Umami's collector stores them, dropped after. `expectedTables` computes,
// from the same event list and independently of the import's SQL, what each imported table must
// hold: the numbers the test compares the import with.

const SCHEMA = readFileSync(new URL('../fixtures/umami/umami-3-schema.sql', import.meta.url), 'utf8');
let databases = 0;

export interface UmamiSession {
  id: string;
  browser: string | null;
  os: string | null;
  device: string | null;
  country: string | null;
  region: string | null;
}

export interface UmamiEvent {
  sessionId: string;
  visitId: string;
  at: DateTime;
  type: 1 | 2;
  path: string;
  hostname: string;
  referrer?: string;
  utm?: { source?: string; medium?: string; campaign?: string };
  name?: string;
}

export interface UmamiDatabase {
  name: string;
  /** The URL the import is given: a password that trust authentication ignores, to check it never leaks. */
  url: string;
  client: pg.Client;
  drop(): Promise<void>;
}

export const FIXTURE_PASSWORD = 'umami-s3cret-pw';

function adminUrl(database: string): string {
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

/** A new database with Umami's schema, connected. */
export async function createUmamiDatabase(): Promise<UmamiDatabase> {
  databases += 1;
  const name = `umami_fixture_${process.pid}_${databases}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`drop database if exists ${name}`);
  await admin.query(`create database ${name}`);
  await admin.end();
  const client = new pg.Client({ connectionString: adminUrl(name) });
  await client.connect();
  await client.query(SCHEMA);
  const url = new URL(adminUrl(name));
  url.password = FIXTURE_PASSWORD;
  return {
    name,
    url: url.toString(),
    client,
    async drop() {
      await client.end();
      const dropper = new pg.Client({ connectionString: POSTGRES_URL });
      await dropper.connect();
      await dropper.query(`drop database if exists ${name} with (force)`);
      await dropper.end();
    },
  };
}

export async function insertWebsite(client: pg.Client, name: string, domain: string, deleted = false): Promise<string> {
  const id = randomUUID();
  await client.query('insert into website (website_id, name, domain, created_at, deleted_at) values ($1, $2, $3, now(), $4)', [id, name, domain, deleted ? new Date() : null]);
  return id;
}

export async function insertSessions(client: pg.Client, websiteId: string, sessions: UmamiSession[]): Promise<void> {
  for (const s of sessions) {
    await client.query('insert into session (session_id, website_id, browser, os, device, screen, language, country, region, city) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)', [
      s.id, websiteId, s.browser, s.os, s.device, '1920x1080', 'en-US', s.country, s.region, 'Somewhere',
    ]);
  }
}

export async function insertEvents(client: pg.Client, websiteId: string, events: UmamiEvent[]): Promise<void> {
  for (const e of events) {
    await client.query(
      `insert into website_event (event_id, website_id, session_id, visit_id, created_at, url_path, url_query, referrer_domain, referrer_path,
         utm_source, utm_medium, utm_campaign, page_title, event_type, event_name, hostname)
       values ($1, $2, $3, $4, $5, $6, null, $7, $8, $9, $10, $11, 'A page', $12, $13, $14)`,
      [
        randomUUID(), websiteId, e.sessionId, e.visitId, e.at.toJSDate(), e.path, e.referrer ?? null, e.referrer ? '/' : null,
        e.utm?.source ?? null, e.utm?.medium ?? null, e.utm?.campaign ?? null, e.type, e.name ?? null, e.hostname,
      ],
    );
  }
}

// ---- What the import must produce, computed from the events (not from the import's SQL) ----

type Row = Record<string, string | number>;
const add = (map: Map<string, Row>, key: Row, metrics: Row) => {
  const id = JSON.stringify(key);
  const found = map.get(id);
  if (!found) map.set(id, { ...key, ...metrics });
  else for (const [name, value] of Object.entries(metrics)) found[name] = Number(found[name]) + Number(value);
};

interface Visit {
  day: string;
  sessionId: string;
  views: UmamiEvent[];
}

/** The expected rows of each imported table (day and keys as the import writes them), for `zone`. */
export function expectedTables(
  sessions: UmamiSession[],
  events: UmamiEvent[],
  zone: string,
  names: { browser(name: string | null): string; os(name: string | null): { name: string; version: string }; device(name: string | null): string; source(domain: string | undefined, host: string): string; region(country: string | null, region: string | null): string },
): Record<string, Row[]> {
  const dayOf = (e: UmamiEvent) => e.at.setZone(zone).toISODate()!;
  const sessionOf = new Map(sessions.map((s) => [s.id, s]));
  const views = events.filter((e) => e.type === 1).sort((a, b) => a.at.toMillis() - b.at.toMillis());
  const visits = new Map<string, Visit>();
  for (const e of views) {
    const id = `${dayOf(e)} ${e.visitId}`;
    const visit = visits.get(id) ?? { day: dayOf(e), sessionId: e.sessionId, views: [] };
    visit.views.push(e);
    visits.set(id, visit);
  }
  const seconds = (v: Visit) => Math.floor((v.views.at(-1)!.at.toMillis() - v.views[0]!.at.toMillis()) / 1000);
  const bounce = (v: Visit) => (v.views.length === 1 ? 1 : 0);

  type VisitRow = Row & { day: string; visitors: number; visits: number; visit_duration: number; bounces: number; pageviews: number };
  /** Session metrics of visits grouped by a key; visitors are distinct sessions of the group. */
  const byVisit = (keyOf: (v: Visit) => Row): VisitRow[] => {
    const groups = new Map<string, { key: Row; visits: Visit[] }>();
    for (const v of visits.values()) {
      const key = { day: v.day, ...keyOf(v) };
      const id = JSON.stringify(key);
      groups.set(id, { key, visits: [...(groups.get(id)?.visits ?? []), v] });
    }
    const out = new Map<string, Row>();
    for (const { key, visits: list } of groups.values()) {
      add(out, key, {
        visitors: new Set(list.map((v) => v.sessionId)).size,
        visits: list.length,
        visit_duration: list.reduce((sum, v) => sum + seconds(v), 0),
        bounces: list.reduce((sum, v) => sum + bounce(v), 0),
        pageviews: list.reduce((sum, v) => sum + v.views.length, 0),
      });
    }
    return [...out.values()] as VisitRow[];
  };
  const session = (v: Visit) => sessionOf.get(v.sessionId)!;

  const pages = new Map<string, { key: Row; sessions: Set<string>; visits: Set<string>; pageviews: number; exits: number; time: number }>();
  for (const v of visits.values()) {
    v.views.forEach((e, index) => {
      const key = { day: v.day, hostname: e.hostname, page: e.path };
      const id = JSON.stringify(key);
      const page = pages.get(id) ?? { key, sessions: new Set(), visits: new Set(), pageviews: 0, exits: 0, time: 0 };
      page.sessions.add(e.sessionId);
      page.visits.add(e.visitId);
      page.pageviews += 1;
      const next = v.views[index + 1];
      if (next) page.time += Math.floor((next.at.toMillis() - e.at.toMillis()) / 1000);
      else page.exits += 1;
      pages.set(id, page);
    });
  }

  const custom = new Map<string, { key: Row; sessions: Set<string>; events: number }>();
  for (const e of events.filter((event) => event.type === 2)) {
    const key = { day: dayOf(e), name: e.name!, link_url: '', path: '' };
    const id = JSON.stringify(key);
    const found = custom.get(id) ?? { key, sessions: new Set(), events: 0 };
    found.sessions.add(e.sessionId);
    found.events += 1;
    custom.set(id, found);
  }

  const visitorsPerDay = byVisit(() => ({})).map(({ day, visitors, pageviews, bounces, visits: count, visit_duration }) => ({ day, visitors, pageviews, bounces, visits: count, visit_duration }));
  const entry = byVisit((v) => ({ entry_page: v.views[0]!.path })).map(({ visits: entrances, ...row }) => ({ ...row, entrances }));
  const exit = byVisit((v) => ({ exit_page: v.views.at(-1)!.path })).map(({ visits: exits, ...row }) => ({ ...row, exits }));
  const sources = byVisit((v) => {
    const first = v.views[0]!;
    const source = names.source(first.referrer, first.hostname);
    return {
      source,
      referrer: source === 'Direct / None' ? '' : (first.referrer ?? ''),
      utm_source: first.utm?.source ?? '',
      utm_medium: first.utm?.medium ?? '',
      utm_campaign: first.utm?.campaign ?? '',
      utm_content: '',
      utm_term: '',
    };
  });
  return {
    imported_visitors: visitorsPerDay,
    imported_sources: sources,
    imported_pages: [...pages.values()].map((p) => ({ ...p.key, visitors: p.sessions.size, visits: p.visits.size, pageviews: p.pageviews, exits: p.exits, time_on_page: p.time })),
    imported_entry_pages: entry,
    imported_exit_pages: exit,
    imported_custom_events: [...custom.values()].map((c) => ({ ...c.key, visitors: c.sessions.size, events: c.events })),
    imported_locations: byVisit((v) => ({ country: session(v).country ?? '', region: names.region(session(v).country, session(v).region), city: '' })),
    imported_devices: byVisit((v) => ({ device: names.device(session(v).device) })),
    imported_browsers: byVisit((v) => ({ browser: names.browser(session(v).browser), browser_version: '' })),
    imported_operating_systems: byVisit((v) => ({ operating_system: names.os(session(v).os).name, operating_system_version: names.os(session(v).os).version })),
  };
}
