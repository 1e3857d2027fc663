import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ClickHouse, openClickHouse } from '../src/db/clickhouse/clickhouse.ts';
import { eventsTableDdl, migrateClickHouse } from '../src/db/clickhouse/clickhouse-schema.ts';
import { fillSessionsStep, refillTouchedDays, sessionsTableReady } from '../src/modules/events/clickhouse-session-fill.ts';
import { describeWithClickHouse, testClickHouseDatabase } from './helpers/clickhouse.ts';
import { sessionsHeld, sessionsNotOnce, sessionsOfEvents } from './helpers/stored-sessions.ts';

// The upgrade of an installation whose events were stored before the sessions table
// (src/modules/events/clickhouse-session-fill.ts): filled a day per step, the open days last with
// the marker that switches the relay to pairs and the reads to the table.

const DAY_MS = 86_400_000;
const NOW = Date.UTC(2026, 5, 10, 12);

function event(id: string, sessionId: string, ms: number, path: string) {
  return {
    id, website_id: 'site-fill', type: 'pageview', name: null, visitor_id: `v-${sessionId}`, session_id: sessionId, hostname: 'fill.example.com',
    path, referrer: null, country: null, browser: null, os: null, device: null, metadata: null, source: 'sdk',
    occurred_at: Math.floor(ms / 1000), occurred_ms: ms, referrer_source: 'Direct/None',
  };
}

describeWithClickHouse('filling the sessions table from stored events (an upgrade)', () => {
  const database = testClickHouseDatabase();
  let ch: ClickHouse;
  beforeAll(() => {
    // Events stored before the sessions table (a new installation's sessions table is ready from the start).
    ch = openClickHouse(database.url, async (bare) => {
      await bare.command(eventsTableDdl('events'));
      await migrateClickHouse(bare);
    });
  });
  afterAll(async () => {
    await ch.close();
    await database.drop();
  });

  it('fills closed days one step at a time, the open days with the marker, each session once as the events give it', async () => {
    // Sessions three and two days ago (one across midnight), and one still open.
    await ch.insert('events', [
      event('e1', 's-old', NOW - 3 * DAY_MS, '/a'),
      event('e2', 's-old', NOW - 3 * DAY_MS + 60_000, '/b'),
      event('e3', 's-midnight', Date.UTC(2026, 5, 8) - 60_000, '/c'),
      event('e4', 's-midnight', Date.UTC(2026, 5, 8) + 60_000, '/d'),
      event('e5', 's-open', NOW - 60_000, '/e'),
    ]);
    let steps = 0;
    while (!(await fillSessionsStep(ch, NOW))) {
      steps += 1;
      expect(await sessionsTableReady(ch)).toBe(false);
    }
    expect(steps).toBeGreaterThanOrEqual(2);
    expect(await sessionsTableReady(ch)).toBe(true);
    expect(await sessionsNotOnce(ch, 'site-fill')).toEqual([]);
    const held = await sessionsHeld(ch, 'site-fill');
    expect(held.map((row) => row.session_id)).toEqual(['s-midnight', 's-old', 's-open']);
    expect(held).toEqual(await sessionsOfEvents(ch, 'site-fill'));
  });

  it('computes a filled day again when an event shipped during the fill reaches it', async () => {
    const late = event('e6', 's-old', NOW - 3 * DAY_MS - 60_000, '/late');
    await ch.insert('events', [late]);
    await refillTouchedDays(ch, [late]);
    expect(await sessionsNotOnce(ch, 'site-fill')).toEqual([]);
    const held = await sessionsHeld(ch, 'site-fill');
    expect(held.find((row) => row.session_id === 's-old')).toMatchObject({ entry_path: '/late', events: '3' });
    expect(held).toEqual(await sessionsOfEvents(ch, 'site-fill'));
  });
});
