import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ClickHouse, openClickHouse } from '../src/db/clickhouse/clickhouse.ts';
import { EVENT_COLUMNS, migrateClickHouse } from '../src/db/clickhouse/clickhouse-schema.ts';
import { SAMPLING_KEY } from '../src/db/clickhouse/sampling-key.ts';
import { eventsHaveSessionAttributes } from '../src/modules/events/clickhouse-session-attributes.ts';
import { fillSessionsStep } from '../src/modules/events/clickhouse-session-fill.ts';
import { recopyTouchedDays, sampledTablesStep, tablesUpgraded } from '../src/modules/events/clickhouse-sampling-upgrade.ts';
import { sessionsInScope } from '../src/modules/stats/clickhouse/overview-ch.ts';
import { type ClickHouseScope, scopeCondition } from '../src/modules/stats/clickhouse/scope-ch.ts';
import type { Filter } from '../src/modules/stats/stats.filters.ts';
import { describeWithClickHouse, testClickHouseDatabase } from './helpers/clickhouse.ts';
import { attributesNotAsSessions } from './helpers/stored-sessions.ts';

// The upgrade of an installation whose events table (already sampled) predates the session
// attributes on events (src/modules/events/clickhouse-session-attributes.ts): the events are
// copied a day per step into a table with the `s_` columns, filled from the sessions table, and
// switched in. Filters on session attributes answer the same looking the sessions up (before) and
// testing the columns (after), including events without a session (their visitor's sessions
// decide) and negated filters.

const DAY_MS = 86_400_000;
const NOW = Date.UTC(2026, 5, 10, 12);
const WEBSITE = 'site-attributes';

/** The events table of the release before the session attributes: sampled, without the `s_` columns. */
const OLD_EVENTS = sql.raw(`CREATE TABLE IF NOT EXISTS events (${EVENT_COLUMNS.map(([n, t]) => `${n} ${t}`).join(', ')})
  ENGINE = MergeTree() PARTITION BY toYYYYMM(occurred_at) ORDER BY (website_id, toDate(occurred_at), ${SAMPLING_KEY}, occurred_at) SAMPLE BY ${SAMPLING_KEY}`);

function event(id: string, sessionId: string | null, visitor: string, ms: number, path: string, source: string | null, utm: string | null, type = 'pageview') {
  return {
    id, website_id: WEBSITE, type, name: type === 'custom' ? 'signup' : null, visitor_id: visitor, session_id: sessionId, hostname: 'attr.example.com',
    path, referrer: null, country: null, browser: null, os: null, device: null, metadata: null, source: 'sdk',
    occurred_at: Math.floor(ms / 1000), occurred_ms: ms, referrer_source: source, referrer_host: source ? `${source.toLowerCase()}.example` : null, utm_source: utm,
  };
}

/** Sessions over five days with entry pages, sources and campaigns varying; a custom event first in some; goals without a session. */
function history() {
  const rows = [];
  for (let day = 5; day >= 0; day -= 1) {
    for (let i = 0; i < 6; i += 1) {
      const at = NOW - day * DAY_MS - (i + 1) * 3_600_000;
      const session = `s${day}-${i}`;
      const visitor = `v${i % 4}`;
      const source = i % 3 === 0 ? 'Google' : i % 3 === 1 ? null : 'Twitter';
      const utm = i % 2 === 0 ? 'spring' : null;
      if (i === 5) rows.push(event(`e${day}-${i}-c`, session, visitor, at - 60_000, '/signup', source, utm, 'custom'));
      rows.push(event(`e${day}-${i}-a`, session, visitor, at, i % 2 === 0 ? '/' : '/pricing', source, utm));
      rows.push(event(`e${day}-${i}-b`, session, visitor, at + 60_000, '/docs', null, null));
    }
    rows.push(event(`g${day}`, null, `v${day % 4}`, NOW - day * DAY_MS - 30 * 60_000, '/goal', null, null, 'custom'));
  }
  return rows;
}

const FILTERS: Filter[][] = [
  [{ dimension: 'entry_page', operator: 'is', values: ['/'] }],
  [{ dimension: 'entry_page', operator: 'is_not', values: ['/'] }],
  [{ dimension: 'referrer', operator: 'is', values: ['Google'] }],
  [{ dimension: 'referrer', operator: 'does_not_contain', values: ['twit'] }],
  [{ dimension: 'utm_source', operator: 'is', values: ['spring'] }],
  [{ dimension: 'entry_page', operator: 'contains', values: ['pric'] }, { dimension: 'utm_source', operator: 'is_not', values: ['spring'] }],
] as Filter[][];

const scopeOf = (filters: Filter[], attributes: boolean): ClickHouseScope => ({
  websiteId: WEBSITE,
  range: { from: new Date(NOW - 6 * DAY_MS).toISOString(), to: new Date(NOW + DAY_MS).toISOString() },
  timezone: 'UTC',
  filters,
  sessions: 'table',
  attributes,
});

/** Per filter set: the events in scope (by id) and the sessions in scope. */
async function reads(ch: ClickHouse, attributes: boolean) {
  const answers = [];
  for (const filters of FILTERS) {
    const scope = scopeOf(filters, attributes);
    const events = await ch.rows<{ id: string }>(sql`select id from events where ${scopeCondition(scope)} order by id`);
    const sessions = await ch.rows<{ session_id: string }>(sql`select session_id from ${sessionsInScope(scope, ['pageviews'])} order by session_id`);
    answers.push({ events: events.map((row) => row.id), sessions: sessions.map((row) => row.session_id) });
  }
  return answers;
}

describeWithClickHouse('session attributes on events: the upgrade of stored events, and filters on the columns', () => {
  const database = testClickHouseDatabase();
  let ch: ClickHouse;
  let before: Awaited<ReturnType<typeof reads>>;

  beforeAll(async () => {
    ch = openClickHouse(database.url, async (bare) => {
      await bare.command(OLD_EVENTS);
      await migrateClickHouse(bare);
    });
    await ch.insert('events', history());
    while (!(await fillSessionsStep(ch, NOW)));
    before = await reads(ch, false);
  });
  afterAll(async () => {
    await ch.close();
    await database.drop();
  });

  it('answers each filter with some events and not all (the comparison means something)', () => {
    for (const answer of before) {
      expect(answer.events.length).toBeGreaterThan(0);
      expect(answer.events.length).toBeLessThan(history().length);
    }
    // The negated entry page keeps the goals without a session of visitors with no '/' entry only.
    expect(before[0]!.events.some((id) => id.startsWith('g'))).toBe(true);
  });

  it('copies the events a day per step with their sessions, a late event recopied, and switches', async () => {
    expect(await eventsHaveSessionAttributes(ch)).toBe(false);
    expect(await tablesUpgraded(ch)).toBe(false);
    expect(await sampledTablesStep(ch, NOW)).toBe(false);
    expect(await sampledTablesStep(ch, NOW)).toBe(false);
    // Meanwhile an event earlier than a copied day's session arrives (its source moves): the relay
    // stores it without the columns (the old table has none) and the session row, then the day is copied again.
    const late = event('e5-0-late', 's5-0', 'v0', NOW - 5 * DAY_MS - 3_600_000 - 120_000, '/late', 'Bing', null);
    await ch.insert('events', [late]);
    await ch.command(sql`insert into sessions select website_id, session_id, -1, events, 'late', started_at, started_ms, ended_ms, visitor_id, pageviews,
      goals, entry_ms, entry_hostname, entry_path, exit_ms, exit_path, referrer_host, referrer_source, utm_source, utm_medium, utm_campaign,
      utm_term, utm_content, ref_param, source_param, via_param from sessions where session_id = 's5-0'`);
    await ch.command(sql`insert into sessions select website_id, session_id, 1, events + 1, 'late', toDateTime(${Math.floor(late.occurred_ms / 1000)}),
      ${late.occurred_ms}, ended_ms, visitor_id, pageviews + 1, goals, ${late.occurred_ms}, entry_hostname, '/late', exit_ms, exit_path,
      'bing.example', 'Bing', NULL, utm_medium, utm_campaign, utm_term, utm_content, ref_param, source_param, via_param
      from sessions where session_id = 's5-0'`);
    await recopyTouchedDays(ch, [late]);
    let steps = 0;
    while (!(await sampledTablesStep(ch, NOW))) steps += 1;
    expect(steps).toBeGreaterThan(0);
    expect(await eventsHaveSessionAttributes(ch)).toBe(true);
    expect(await tablesUpgraded(ch)).toBe(true);
    expect(await attributesNotAsSessions(ch, WEBSITE)).toEqual([]);
    const [moved] = await ch.rows<Record<string, string>>(sql`select s_entry_path, s_referrer_source from events where id = 'e5-0-b'`);
    expect(moved).toEqual({ s_entry_path: '/late', s_referrer_source: 'Bing' });
  });

  it('answers the filters from the columns as it did from the sessions', async () => {
    const lookedUp = await reads(ch, false);
    expect(await reads(ch, true)).toEqual(lookedUp);
    // The late event's session now enters on '/late' from Bing: only those two answers differ from before the upgrade.
    expect(lookedUp).not.toEqual(before);
  });

  it('makes a new installation with the columns and its sessions table ready', async () => {
    const fresh = testClickHouseDatabase();
    const other = openClickHouse(fresh.url, migrateClickHouse);
    try {
      expect(await eventsHaveSessionAttributes(other)).toBe(true);
      expect(await tablesUpgraded(other)).toBe(true);
      expect(await fillSessionsStep(other, NOW)).toBe(true);
    } finally {
      await other.close();
      await fresh.drop();
    }
  });
});
