// The ClickHouse visitor list's reads one by one, three times each, on the bench's synthetic
// events (EVENTS, default 2 million, over 30 days; sessions filled from them day by day) in a
// database of its own, dropped at the end: the page with its total, the total exact and sampled,
// and the per-visitor reads of the 100 newest visitors, over all time (the events' reads, used
// before the sessions table is filled) and bounded (the page's window, the sessions table).
// Run: EVENTS=10000000 node bin/run-ts.js bench/visitor-list-reads.ts (docs/decisions.md, "The
// ClickHouse visitor list reads a bounded amount").
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { openClickHouse } from '../src/db/clickhouse/clickhouse.ts';
import { migrateClickHouse } from '../src/db/clickhouse/clickhouse-schema.ts';
import { fillSpan } from '../src/modules/events/clickhouse-session-fill.ts';
import { visitorsPage } from '../src/modules/stats/clickhouse/visitor-pages-ch.ts';
import { firstSessions, firstVisitEvents, latestEvents } from '../src/modules/stats/clickhouse/visitor-rows-ch.ts';
import { seedQuery } from './clickhouse.ts';

const EVENTS = Number(process.env.EVENTS ?? 2_000_000);
const url = `http://127.0.0.1:8123/sl_parts_${randomBytes(6).toString('hex')}`;
const ch = openClickHouse(url, migrateClickHouse);
const timed = async <T>(label: string, read: () => Promise<T>): Promise<T> => {
  const times: number[] = [];
  let result: T;
  for (let i = 0; i < 3; i += 1) {
    const t = performance.now();
    result = await read();
    times.push(Math.round(performance.now() - t));
  }
  console.log(`${label}: ${times.join(', ')} ms`);
  return result!;
};
try {
  const now = Date.now();
  await ch.rows(sql`select 1`);
  // Seeded in parts of 200,000 rows: one of a million took longer than the client's 30 s on a loaded machine.
  for (let offset = 0; offset < EVENTS; offset += 200_000) await ch.command(seedQuery('w', 'p.example.com', EVENTS, now, { offset, count: Math.min(200_000, EVENTS - offset) }));
  console.error('seeded', new Date().toISOString());
  for (let day = now - 31 * 86_400_000; day < now + 86_400_000; day += 86_400_000) await fillSpan(ch, day, day + 86_400_000);
  console.error('filled', new Date().toISOString());
  const where = sql`website_id = 'w'`;
  const page = await timed('page (newest window) and exact total', () => visitorsPage(ch, where, null, { limit: 100, offset: 0 }, { where, sample: null }));
  await timed('total alone (uniqExact, every event)', () => ch.rows(sql`select uniqExact(visitor_id) from events where ${where}`));
  await timed('total sampled at 0.1 (uniqExact over events sample 0.1)', () => ch.rows(sql`select uniqExact(visitor_id) from events sample 0.1 where ${where}`));
  const ids = page.rows.map((row) => row.visitor_id);
  console.log(`window since ${page.since === undefined ? 'none' : new Date(page.since).toISOString()}`);
  await timed('latestEvents over all time', () => latestEvents(ch, 'w', ids));
  await timed('firstVisitEvents (events, all time)', () => firstVisitEvents(ch, 'w', ids));
  await timed('latestEvents from the window', () => latestEvents(ch, 'w', ids, page.since ?? null));
  await timed('firstSessions (sessions table)', () => firstSessions(ch, 'w', ids));
} finally {
  await ch.command(sql.raw(`drop database if exists ${new URL(url).pathname.slice(1)}`)).catch(() => {});
  await ch.close();
}
