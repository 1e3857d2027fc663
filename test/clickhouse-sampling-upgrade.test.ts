import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ClickHouse, openClickHouse } from '../src/db/clickhouse/clickhouse.ts';
import { EVENT_COLUMNS, migrateClickHouse } from '../src/db/clickhouse/clickhouse-schema.ts';
import { SESSION_ROW_COLUMNS } from '../src/modules/events/clickhouse-sessions.ts';
import { fillSessionsStep } from '../src/modules/events/clickhouse-session-fill.ts';
import { deleteWithCopy, recopyTouchedDays, sampledTablesReady, sampledTablesStep } from '../src/modules/events/clickhouse-sampling-upgrade.ts';
import { sessionsInScope } from '../src/modules/stats/clickhouse/overview-ch.ts';
import { type ClickHouseScope, scopeCondition } from '../src/modules/stats/clickhouse/scope-ch.ts';
import { describeWithClickHouse, testClickHouseDatabase } from './helpers/clickhouse.ts';

// The upgrade of an installation whose events and sessions tables predate the sampling key
// (src/modules/events/clickhouse-sampling-upgrade.ts): copied a day per step into tables declared
// with it, switched by RENAME once the copy reaches the open days. The reads answer the same
// before, during (from the old tables) and after; a copy cut by a crash, and a switch cut between
// its renames, end with every row once.

const DAY_MS = 86_400_000;
const NOW = Date.UTC(2026, 5, 10, 12);
const WEBSITE = 'site-upgrade';

/** The declarations of the release before the sampling key. */
const OLD_EVENTS = sql.raw(`CREATE TABLE IF NOT EXISTS events (${EVENT_COLUMNS.map(([n, t]) => `${n} ${t}`).join(', ')})
  ENGINE = MergeTree() PARTITION BY toYYYYMM(occurred_at) ORDER BY (website_id, occurred_at, visitor_id)`);
const OLD_SESSIONS = sql.raw(`CREATE TABLE IF NOT EXISTS sessions (${SESSION_ROW_COLUMNS.map(([n, t]) => `${n} ${t}`).join(', ')})
  ENGINE = VersionedCollapsingMergeTree(sign, events) PARTITION BY toYYYYMM(started_at) ORDER BY (website_id, toDate(started_at), session_id)`);

async function oldRelease(ch: ClickHouse): Promise<void> {
  await ch.command(OLD_EVENTS);
  await ch.command(OLD_SESSIONS);
  await migrateClickHouse(ch);
}

function event(id: string, sessionId: string, ms: number, path: string, device: string) {
  return {
    id, website_id: WEBSITE, type: 'pageview', name: null, visitor_id: `v-${sessionId}`, session_id: sessionId, hostname: 'up.example.com',
    path, referrer: null, country: null, browser: null, os: null, device, metadata: null, source: 'sdk',
    occurred_at: Math.floor(ms / 1000), occurred_ms: ms, referrer_source: 'Direct/None',
  };
}

/** Sessions over six days: some of one pageview (bounces), some of two, on two devices. */
function history() {
  const rows = [];
  for (let day = 6; day >= 0; day -= 1) {
    for (let i = 0; i < 5; i += 1) {
      const at = NOW - day * DAY_MS - (i + 1) * 3_600_000;
      const session = `s${day}-${i}`;
      const device = i % 2 === 0 ? 'desktop' : 'mobile';
      rows.push(event(`e${day}-${i}-a`, session, at, '/', device));
      if (i % 3 !== 0) rows.push(event(`e${day}-${i}-b`, session, at + 60_000, `/p${i}`, device));
    }
  }
  return rows;
}

const SCOPE: ClickHouseScope = {
  websiteId: WEBSITE,
  range: { from: new Date(NOW - 8 * DAY_MS).toISOString(), to: new Date(NOW + DAY_MS).toISOString() },
  timezone: 'UTC',
  filters: [{ dimension: 'device', operator: 'is', values: ['desktop'] }] as ClickHouseScope['filters'],
  sessions: 'table',
};

/** What the filtered reads answer: the events in scope and the sessions (from the sessions table) that hold one. */
async function reads(ch: ClickHouse) {
  const [events] = await ch.rows<Record<string, string>>(sql`select count() as events, uniqExact(visitor_id) as visitors from events where ${scopeCondition(SCOPE)}`);
  const [sessions] = await ch.rows<Record<string, string>>(sql`select count() as sessions, countIf(pageviews <= 1) as bounces from ${sessionsInScope(SCOPE, ['pageviews'])}`);
  return { ...events, ...sessions };
}

const ids = async (ch: ClickHouse, table: string) =>
  (await ch.rows<{ id: string }>(sql`select id from ${sql.table(table)} order by id`)).map((row) => row.id);
const sessionRows = async (ch: ClickHouse, table: string) =>
  ch.rows(sql`select session_id, sign, events, started_ms, visitor_id, pageviews from ${sql.table(table)} order by session_id, events, sign`);
const samplingKeyOf = async (ch: ClickHouse, table: string) =>
  (await ch.rows<{ key: string }>(sql`select sampling_key as key from system.tables where database = currentDatabase() and name = ${table}`))[0]?.key ?? '';
const tables = async (ch: ClickHouse) =>
  (await ch.rows<{ name: string }>(sql`select name from system.tables where database = currentDatabase() order by name`)).map((row) => row.name);

describeWithClickHouse('upgrading the events and sessions tables to their sampling key', () => {
  const database = testClickHouseDatabase();
  let ch: ClickHouse;
  let before: Awaited<ReturnType<typeof reads>>;

  beforeAll(async () => {
    ch = openClickHouse(database.url, oldRelease);
    await ch.insert('events', history());
    while (!(await fillSessionsStep(ch, NOW)));
    before = await reads(ch);
    expect(Number(before.events)).toBeGreaterThan(20);
  });
  afterAll(async () => {
    await ch.close();
    await database.drop();
  });

  it('starts unsampled and copies a day per step, reads answering from the old tables meanwhile', async () => {
    expect(await sampledTablesReady(ch)).toBe(false);
    expect(await sampledTablesStep(ch, NOW)).toBe(false);
    expect(await sampledTablesStep(ch, NOW)).toBe(false);
    expect(await tables(ch)).toContain('events_sampled');
    expect(await sampledTablesReady(ch)).toBe(false);
    expect(await reads(ch)).toEqual(before);
  });

  it('copies a copied day again when an event shipped meanwhile lands on it, and takes deletes to the copy', async () => {
    const late = event('e-late', 's6-1', NOW - 6 * DAY_MS - 30 * 60_000, '/late', 'desktop');
    await ch.insert('events', [late]);
    await recopyTouchedDays(ch, [late]);
    const [copied] = await ch.rows<{ n: string }>(sql`select count() as n from events_sampled where id = 'e-late'`);
    expect(Number(copied!.n)).toBe(1);
    await deleteWithCopy(ch, 'events', sql`id = 'e-late'`);
    const [gone] = await ch.rows<{ n: string }>(sql`select count() as n from events_sampled where id = 'e-late'`);
    expect(Number(gone!.n)).toBe(0);
    expect(await reads(ch)).toEqual(before);
  });

  it('resumes after a crash in the middle of a day: the cut copy is deleted and made again, every row once', async () => {
    // A crash during the next day's INSERT: part of it is in the copy, no progress recorded.
    const [progress] = await ch.rows<{ until: string }>(sql`select max(toUInt64(value)) as until from sightline_state where name = 'events sampled copy until'`);
    const until = Number(progress!.until);
    const columns = sql.raw(EVENT_COLUMNS.map(([name]) => name).join(', '));
    await ch.command(sql`insert into events_sampled (${columns}) select ${columns} from events where occurred_at >= toDateTime(${until / 1000}) limit 2`);
    // And the process starts again: a new connection, the tables made as at any start.
    await ch.close();
    ch = openClickHouse(database.url, migrateClickHouse);
    // Steps until the events are switched (the sessions' copy comes next).
    while ((await samplingKeyOf(ch, 'events')) === '') expect(await sampledTablesStep(ch, NOW)).toBe(false);
    expect(await ids(ch, 'events')).toEqual(history().map((row) => row.id).sort());
    expect(await tables(ch)).not.toContain('events_unsampled');
    expect(await reads(ch)).toEqual(before);
  });

  it('finishes a switch cut between its renames at the next start, then reads the same from the sampled tables', async () => {
    const expected = await sessionRows(ch, 'sessions');
    // Run the copy to its last step by hand, cut after the first rename.
    for (;;) {
      const [progress] = await ch.rows<{ until: string }>(sql`select max(toUInt64(value)) as until from sightline_state where name = 'sessions sampled copy until'`);
      if (Number(progress!.until) + 2 * DAY_MS + 3_600_000 > NOW) break;
      expect(await sampledTablesStep(ch, NOW)).toBe(false);
    }
    // The last step, cut by a crash after its first rename: the open days copied, the old table renamed.
    const [progress] = await ch.rows<{ until: string }>(sql`select max(toUInt64(value)) as until from sightline_state where name = 'sessions sampled copy until'`);
    await ch.command(sql`insert into sessions_sampled select * from sessions where started_at >= toDateTime(${Number(progress!.until) / 1000})`);
    await ch.command(sql`rename table sessions to sessions_unsampled`);
    await ch.close();
    ch = openClickHouse(database.url, migrateClickHouse);
    expect(await sampledTablesReady(ch)).toBe(true);
    expect(await tables(ch)).not.toContain('sessions_unsampled');
    expect(await tables(ch)).not.toContain('sessions_sampled');
    expect(await sessionRows(ch, 'sessions')).toEqual(expected);
    expect(await reads(ch)).toEqual(before);
    expect(await sampledTablesStep(ch, NOW)).toBe(true);
  });

  it('keeps the rollups fed after the switch, and the sampled tables answer SAMPLE', async () => {
    const [declared] = await ch.rows<{ events: string; sessions: string }>(sql`select
      anyIf(sampling_key, name = 'events') as events, anyIf(sampling_key, name = 'sessions') as sessions
      from system.tables where database = currentDatabase()`);
    expect(declared).toEqual({ events: 'cityHash64(visitor_id)', sessions: 'cityHash64(visitor_id)' });
    const rolledUp = async () =>
      Number((await ch.rows<{ n: string }>(sql`select countMerge(events) as n from event_days where website_id = ${WEBSITE} and breakdown = 'devices'`))[0]!.n);
    const earlier = await rolledUp();
    await ch.insert('events', [event('e-after', 's-after', NOW + 60_000, '/after', 'desktop')]);
    expect(await rolledUp()).toBe(earlier + 1);
    const [sampled] = await ch.rows<{ n: string }>(sql`select count() as n from events sample 0.5 where website_id = ${WEBSITE}`);
    expect(Number(sampled!.n)).toBeLessThanOrEqual(history().length + 1);
  });
});
