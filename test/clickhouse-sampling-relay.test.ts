import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ClickHouse, openClickHouse } from '../src/db/clickhouse/clickhouse.ts';
import { EVENT_COLUMNS, migrateClickHouse } from '../src/db/clickhouse/clickhouse-schema.ts';
import type { Db } from '../src/db/database.ts';
import { ClickHouseRelay } from '../src/modules/events/clickhouse-relay.ts';
import { sampledTablesReady } from '../src/modules/events/clickhouse-sampling-upgrade.ts';
import { fillSessionsStep } from '../src/modules/events/clickhouse-session-fill.ts';
import { SESSION_ROW_COLUMNS } from '../src/modules/events/clickhouse-sessions.ts';
import { clickhouseEventStore } from '../src/modules/stats/clickhouse/clickhouse-event-store.ts';
import type { EventStore } from '../src/modules/stats/event-store.ts';
import type { StatsScope } from '../src/modules/stats/stats.params.ts';
import { describeWithClickHouse, testClickHouseDatabase } from './helpers/clickhouse.ts';
import { openTestDatabase } from './helpers/engines.ts';

// The upgrade to the sampled tables as the relay runs it (clickhouse-relay.ts calls
// clickhouse-sampling-upgrade.ts a step per turn): an installation with six days of events in
// tables declared as the previous release did; events keep arriving (one of them for a day
// already copied) while the relay copies; the event store's reads answer the same as the events
// say before, during and after, a relay started again mid-way (a restart) carries on, and once
// both tables are switched a large read samples.

const DAY_MS = 86_400_000;
const WEBSITE = 'site-relay-upgrade';
const MONEY = { currency: 'USD', includeRenewals: true };

const OLD_EVENTS = sql.raw(`CREATE TABLE IF NOT EXISTS events (${EVENT_COLUMNS.map(([n, t]) => `${n} ${t}`).join(', ')})
  ENGINE = MergeTree() PARTITION BY toYYYYMM(occurred_at) ORDER BY (website_id, occurred_at, visitor_id)`);
const OLD_SESSIONS = sql.raw(`CREATE TABLE IF NOT EXISTS sessions (${SESSION_ROW_COLUMNS.map(([n, t]) => `${n} ${t}`).join(', ')})
  ENGINE = VersionedCollapsingMergeTree(sign, events) PARTITION BY toYYYYMM(started_at) ORDER BY (website_id, toDate(started_at), session_id)`);

const quiet = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} } as unknown as FastifyBaseLogger;

function event(id: string, sessionId: string, ms: number, path: string, device: string): Record<string, unknown> {
  const row: Record<string, unknown> = Object.fromEntries(EVENT_COLUMNS.map(([name]) => [name, null]));
  return {
    ...row, id, website_id: WEBSITE, type: 'pageview', visitor_id: `v-${sessionId}`, session_id: sessionId, hostname: 'relay.example.com',
    path, device, source: 'sdk', occurred_at: Math.floor(ms / 1000), occurred_ms: ms, referrer_source: 'Direct/None',
  };
}

describeWithClickHouse('the relay upgrading to the sampled tables while events arrive', () => {
  const clickhouse = testClickHouseDatabase();
  let records: Db;
  let dropRecords: () => Promise<void>;
  let ch: ClickHouse;
  let relay: ClickHouseRelay;
  let store: EventStore;
  const now = Date.now();
  let sent = 0;

  const scope = (filtered: boolean, exact = true): StatsScope => ({
    websiteId: WEBSITE,
    range: { from: new Date(now - 10 * DAY_MS).toISOString(), to: new Date(now + DAY_MS).toISOString() },
    timezone: 'UTC',
    filters: filtered ? ([{ dimension: 'device', operator: 'is', values: ['desktop'] }] as StatsScope['filters']) : [],
    exact,
  });
  /** What the reads answer: the overview's counts filtered and not, and the filtered pages. */
  const reads = async (exact = true) => {
    const filtered = await store.overview(scope(true, exact), MONEY);
    const all = await store.overview(scope(false, exact), MONEY);
    const pages = await store.breakdown('pages', scope(true, exact), { limit: 100, offset: 0 }, MONEY);
    return { filtered, all, pages };
  };
  /** One relay turn: ships what waits, then one step of the upgrade. */
  const turn = async () => {
    relay.wake();
    await relay.settle();
  };
  /** Events accepted as ingestion queues them for ClickHouse. */
  const accept = async (...rows: Record<string, unknown>[]) => {
    await records.kysely.insertInto('event_relay').values(rows.map((row) => ({ website_id: WEBSITE, row: JSON.stringify(row) }))).execute();
    sent += rows.length;
  };
  const stored = async () => Number((await ch.rows<{ n: string }>(sql`select count() as n from events where website_id = ${WEBSITE}`))[0]!.n);

  beforeAll(async () => {
    const opened = await openTestDatabase('sqlite');
    records = opened.db;
    dropRecords = opened.drop;
    // The relay rows name a website that this test keeps in ClickHouse only: no websites row to reference.
    await sql`pragma foreign_keys = OFF`.execute(records.kysely);
    ch = openClickHouse(clickhouse.url, async (bare) => {
      await bare.command(OLD_EVENTS);
      await bare.command(OLD_SESSIONS);
      await migrateClickHouse(bare);
    });
    const history = [];
    for (let day = 6; day >= 0; day -= 1) {
      for (let i = 0; i < 6; i += 1) {
        const at = now - day * DAY_MS - (i + 2) * 3_600_000;
        const device = i % 2 === 0 ? 'desktop' : 'mobile';
        history.push(event(`h${day}-${i}-a`, `s${day}-${i}`, at, '/', device));
        if (i % 3 !== 0) history.push(event(`h${day}-${i}-b`, `s${day}-${i}`, at + 60_000, `/p${i}`, device));
      }
    }
    await ch.insert('events', history);
    sent = history.length;
    // The sessions table of the previous release, filled as its relay filled it.
    while (!(await fillSessionsStep(ch, now)));
    relay = new ClickHouseRelay(records.kysely, ch, quiet);
    store = clickhouseEventStore(ch, records.kysely, () => relay.settle(), { sampleThreshold: 10 });
  }, 60_000);
  afterAll(async () => {
    await relay?.stop();
    await ch?.close();
    await records?.close();
    await dropRecords?.();
    await clickhouse.drop();
  });

  it('reads the same before, during (with events arriving, one on a copied day, and a restart) and after', async () => {
    const before = await reads();
    expect(before.all.pageviews).toBe(sent);
    expect(before.filtered.sampleRate).toBeUndefined();
    let turns = 0;
    let restarted = false;
    while (!(await sampledTablesReady(ch))) {
      turns += 1;
      expect(turns, 'the upgrade ends').toBeLessThan(40);
      if (turns === 3) {
        // An event for the oldest day, already copied (checked), and one for now, both on desktop.
        const [progress] = await ch.rows<{ until: string }>(sql`select max(toUInt64(value)) as until from sightline_state where name = 'events sampled copy until'`);
        expect(Number(progress!.until)).toBeGreaterThan(now - 6 * DAY_MS - 30 * 60_000);
        await accept(event(`late-${turns}`, 'late-session', now - 6 * DAY_MS - 30 * 60_000, '/late', 'desktop'), event(`now-${turns}`, 'now-session', now - 60_000, '/now', 'desktop'));
      }
      if (turns === 5 && !restarted) {
        // A restart: a new relay, its memory empty, the upgrade's record where the last one left it.
        await relay.stop();
        relay = new ClickHouseRelay(records.kysely, ch, quiet);
        store = clickhouseEventStore(ch, records.kysely, () => relay.settle(), { sampleThreshold: 10 });
        restarted = true;
      }
      await turn();
      if (turns === 3) {
        // The late event's day was copied before it came: the relay copied the day again.
        const [late] = await ch.rows<{ n: string }>(sql`select count() as n from events_sampled where id = 'late-3'`);
        expect(Number(late!.n)).toBe(1);
      }
      const during = await reads();
      expect(during.all.pageviews).toBe(sent);
      expect(during.filtered.sampleRate).toBeUndefined();
      if (turns < 3) expect(during).toEqual(before);
    }
    expect(turns).toBeGreaterThan(5);
    expect(await stored()).toBe(sent);
    const [copies] = await ch.rows<{ n: string }>(sql`select count() as n from system.tables where database = currentDatabase() and name like '%sampled'`);
    expect(Number(copies!.n)).toBe(0);
    // After: the same counts as the events give, every event once, and the filtered ones as before plus the two desktop events.
    const after = await reads();
    expect(after.all.pageviews).toBe(sent);
    expect(after.filtered.pageviews).toBe(before.filtered.pageviews + 2);
    expect(after.filtered.visitors).toBe(before.filtered.visitors + 2);
    expect(after.filtered.sessions).toBe(before.filtered.sessions + 2);
    expect(after.pages.rows.find((row) => row.keys.path === '/late')?.pageviews).toBe(1);
    // And now a large read (threshold 10 events) samples; exact=true does not.
    const sampled = await reads(false);
    expect(sampled.filtered.sampleRate).toBeGreaterThan(0);
    expect(sampled.all.sampleRate).toBeUndefined();
    expect((await reads(true)).filtered.sampleRate).toBeUndefined();
  });
});
