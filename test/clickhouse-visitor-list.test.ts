import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ClickHouse, openClickHouse } from '../src/db/clickhouse/clickhouse.ts';
import { migrateClickHouse } from '../src/db/clickhouse/clickhouse-schema.ts';
import { type SessionRow, collapsingPair } from '../src/modules/events/clickhouse-sessions.ts';
import { visitorsPage } from '../src/modules/stats/clickhouse/visitor-pages-ch.ts';
import { firstSessions, latestEvents, visitStats } from '../src/modules/stats/clickhouse/visitor-rows-ch.ts';
import { describeWithClickHouse, testClickHouseDatabase } from './helpers/clickhouse.ts';

// The visitor list on ClickHouse reads the newest hour of its range first and doubles the window
// until it holds the page (src/modules/stats/clickhouse/visitor-pages-ch.ts): every page must be
// the one the whole range's grouping gives, whether the window holds it at once, after widening,
// or never (the list's tail), with ties on the last event across the window's edge. A visitor's
// sessions are read from the sessions table's rows before they collapse (visitor-rows-ch.ts).

const HOUR_MS = 3_600_000;
const NOW = Date.UTC(2026, 5, 10, 12);
const WEBSITE = 'site-list';

function event(id: string, visitor: string, ms: number) {
  return {
    id, website_id: WEBSITE, type: 'pageview', name: null, visitor_id: visitor, session_id: `s-${visitor}`, hostname: 'list.example.com',
    path: '/', referrer: null, country: null, browser: null, os: null, device: null, metadata: null, source: 'sdk',
    occurred_at: Math.floor(ms / 1000), occurred_ms: ms,
  };
}

/** 60 visitors in the last hour (some tied on their last event), then 140 spread over ten days, each with earlier events too. */
function history() {
  const rows = [];
  for (let i = 0; i < 200; i += 1) {
    const last = i < 60 ? NOW - 1_000 - Math.floor(i / 3) * 60_000 : NOW - HOUR_MS - (i - 60) * 1.7 * HOUR_MS;
    rows.push(event(`e${i}-last`, `v${String(i).padStart(3, '0')}`, last));
    rows.push(event(`e${i}-early`, `v${String(i).padStart(3, '0')}`, last - 5 * HOUR_MS));
  }
  return rows;
}

const RANGE = { from: new Date(NOW - 12 * 24 * HOUR_MS).toISOString(), to: new Date(NOW).toISOString() };
const WHERE = sql`website_id = ${WEBSITE} and occurred_ms >= ${NOW - 12 * 24 * HOUR_MS} and occurred_ms < ${NOW}`;

describeWithClickHouse('the ClickHouse visitor list reads the newest window first', () => {
  const database = testClickHouseDatabase();
  let ch: ClickHouse;
  beforeAll(async () => {
    ch = openClickHouse(database.url, migrateClickHouse);
    await ch.insert('events', history());
  });
  afterAll(async () => {
    await ch.close();
    await database.drop();
  });

  /** The page as the whole range's grouping gives it. */
  const whole = (limit: number, offset: number) =>
    ch.rows<{ visitor_id: string; last_ms: string }>(sql`select visitor_id, max(occurred_ms) as last_ms from events where ${WHERE}
      group by visitor_id order by last_ms desc, visitor_id limit ${limit} offset ${offset}`);

  it('answers every page as the whole range does: held by the first hour, after widening, and at the tail', async () => {
    for (const [limit, offset] of [[10, 0], [25, 40], [50, 50], [30, 150], [100, 180], [10, 195], [10, 400]] as const) {
      const page = await visitorsPage(ch, WHERE, RANGE, { limit, offset }, { where: WHERE, sample: null });
      expect(page.rows.map((row) => [row.visitor_id, String(row.last_ms)]), `limit ${limit} offset ${offset}`).toEqual(
        (await whole(limit, offset)).map((row) => [row.visitor_id, String(row.last_ms)]),
      );
      expect(page.total).toBe(200);
      // Read one row further than the page: whether more follow, without the total.
      expect(page.hasMore, `limit ${limit} offset ${offset}`).toBe(offset + limit < 200);
    }
  });

  it('answers every page over all time as the whole grouping does (windows back from now, the events months before it)', async () => {
    const all = sql`website_id = ${WEBSITE}`;
    for (const [limit, offset] of [[10, 0], [50, 50], [100, 180], [10, 400]] as const) {
      const page = await visitorsPage(ch, all, null, { limit, offset }, { where: all, sample: null });
      const rows = await ch.rows<{ visitor_id: string; last_ms: string }>(sql`select visitor_id, max(occurred_ms) as last_ms from events where ${all}
        group by visitor_id order by last_ms desc, visitor_id limit ${limit} offset ${offset}`);
      expect(page.rows.map((row) => [row.visitor_id, String(row.last_ms)]), `limit ${limit} offset ${offset}`).toEqual(rows.map((row) => [row.visitor_id, String(row.last_ms)]));
      expect(page.hasMore).toBe(offset + limit < 200);
    }
  });

  it("reads a visitor's sessions from the table by their live rows: a session whose visitor changed counts for its new visitor only", async () => {
    const site = 'site-sessions';
    const session = (id: string, visitor: string, ms: number, events: number, source: string): Omit<SessionRow, 'sign' | 'batch'> => ({
      website_id: site, session_id: id, events, started_at: Math.floor(ms / 1000), started_ms: ms, ended_ms: ms + 60_000, visitor_id: visitor,
      pageviews: events, goals: 0, entry_ms: ms, entry_hostname: 'list.example.com', entry_path: '/', exit_ms: ms, exit_path: '/',
      referrer_host: null, referrer_source: source, utm_source: null, utm_medium: null, utm_campaign: null, utm_term: null, utm_content: null,
      ref_param: null, source_param: null, via_param: null,
    });
    // s1 was w1's first session until a late event of w2, a minute earlier, made it w2's (version 2);
    // w1's own sessions: s2 and s3, which start at the same instant (s3 written first).
    const s1 = { ...session('s1', 'w1', NOW - 10 * HOUR_MS, 1, 'Google'), sign: 1 as const, batch: 'b1' };
    const rows = [
      s1,
      ...collapsingPair(s1, { ...session('s1', 'w2', NOW - 10 * HOUR_MS - 60_000, 2, 'Reddit'), sign: 1, batch: 'b2' }),
      { ...session('s3', 'w1', NOW - 5 * HOUR_MS, 1, 'Bing'), sign: 1 as const, batch: 'b3' },
      { ...session('s2', 'w1', NOW - 5 * HOUR_MS, 1, 'GitHub'), sign: 1 as const, batch: 'b3' },
    ];
    // Each row its own part, and no merge, so nothing has collapsed when the reads run.
    await ch.command(sql`system stop merges sessions`);
    for (const row of rows) await ch.insert('sessions', [row]);
    const [parts] = await ch.rows<{ n: string }>(sql`select count() as n from system.parts where database = currentDatabase() and table = 'sessions' and active`);
    expect(Number(parts?.n)).toBe(rows.length);
    // Each visitor alone too: read with w1 only, s1's rows are w1's cancelled pair and nothing else.
    for (const ids of [['w1'], ['w2'], ['w1', 'w2']]) {
      const firsts = await firstSessions(ch, site, ids);
      const visits = await visitStats(ch, site, ids, 'table');
      if (ids.includes('w1')) {
        expect([firsts.get('w1')?.session_id, firsts.get('w1')?.referrer_source], ids.join()).toEqual(['s2', 'GitHub']);
        expect(visits.get('w1'), ids.join()).toEqual({ count: 2, currentStartAt: new Date(NOW - 5 * HOUR_MS).toISOString() });
      }
      if (ids.includes('w2')) {
        expect([firsts.get('w2')?.session_id, firsts.get('w2')?.referrer_source], ids.join()).toEqual(['s1', 'Reddit']);
        expect(visits.get('w2'), ids.join()).toEqual({ count: 1, currentStartAt: new Date(NOW - 10 * HOUR_MS - 60_000).toISOString() });
      }
    }
    await ch.command(sql`system start merges sessions`);
  });

  it('finds a visitor\'s events by id and hash alike', async () => {
    const latest = await latestEvents(ch, WEBSITE, ['v005', 'v150', 'missing']);
    expect([...latest.keys()].sort()).toEqual(['v005', 'v150']);
    expect(latest.get('v150')!.id).toBe('e150-last');
  });
});
