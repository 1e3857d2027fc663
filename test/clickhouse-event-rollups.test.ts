import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { deleteAndWait } from '../src/db/clickhouse/mutations.ts';
import { ROLLED_UP_BREAKDOWNS, buildEventRollupsOnce, eventRollupsBuilt } from '../src/modules/events/clickhouse-event-rollups.ts';
import type { NewEvent } from '../src/modules/events/event.types.ts';
import { type TestAccount, createAccount, createWebsite, newEvent } from './helpers/factories.ts';
import { type TestApp, useTestApp, writeAndDerive } from './helpers/app.ts';
import { describeWithClickHouse } from './helpers/clickhouse.ts';
import { rollupsHeld, rollupsRebuilt } from './helpers/event-rollups.ts';

// The breakdowns over events read rollups on ClickHouse (whole UTC days and hours from the
// rollups, the partial hours at a range's edges from the events). These tests check that each
// answer is the one the events give (the same read with a filter that keeps every event goes to
// the events alone), and that the rollups stay equal to a rebuild from the events after deletes,
// after a shipment cut by a crash (clickhouse-relay.test.ts) and after a first build over events
// stored before they existed.

const PATHS = ['/', '/pricing', '/docs', '/blog/a'];
const PLACES = [
  { country: 'US', details: { region: 'California', city: 'San Jose' } },
  { country: 'DE', details: { region: 'Berlin', city: 'Berlin' } },
  { country: null, details: {} },
];
const AGENTS = [
  { browser: 'Chrome', os: 'Windows', device: 'desktop' },
  { browser: 'Safari', os: 'iOS', device: 'mobile' },
  { browser: null, os: null, device: null },
];

/** 90 events over 60 hours from 2026-03-02 06:00 UTC, at minutes that fall inside and across hour edges. */
function traffic(websiteId: string, domain: string): NewEvent[] {
  return Array.from({ length: 90 }, (_, i) => {
    const visitor = `v${i % 13}`;
    const at = Date.parse('2026-03-02T06:00:00.000Z') + i * 40 * 60_000 + (i % 7) * 61_000;
    const place = PLACES[i % 3]!;
    const agent = AGENTS[(i * 5) % 3]!;
    const kind = i % 9 === 4 ? 'goal' : i % 11 === 6 ? 'click' : 'pageview';
    const extra: Partial<NewEvent> =
      kind === 'goal'
        ? { type: 'custom', name: i % 2 === 0 ? 'signup' : 'purchase', source: i % 4 === 0 ? 'api' : 'browser' }
        : kind === 'click'
          ? { type: 'external_link', details: { linkUrl: `https://github.com/acme/${i % 2}` } }
          : {};
    return newEvent(websiteId, visitor, {
      sessionId: `s-${visitor}-${Math.floor(i / 20)}`,
      hostname: domain,
      path: PATHS[i % PATHS.length]!,
      occurredAt: new Date(at).toISOString(),
      country: place.country,
      ...agent,
      ...extra,
      details: { ...place.details, ...(extra.details ?? {}) },
    });
  });
}

/** All time; whole UTC days; days, hours and partial hours; hours and partial hours; one partial hour; whole hours. */
const RANGES = [
  '',
  '&startAt=2026-03-02&endAt=2026-03-04',
  '&startAt=2026-03-02&endAt=2026-03-03&timezone=Asia/Kolkata',
  '&startAt=2026-03-02T09:20:00.000Z&endAt=2026-03-04T07:45:00.000Z',
  '&startAt=2026-03-02T09:20:00.000Z&endAt=2026-03-02T17:45:00.000Z',
  '&startAt=2026-03-02T10:10:00.000Z&endAt=2026-03-02T10:50:00.000Z',
  '&startAt=2026-03-02T10:00:00.000Z&endAt=2026-03-03T13:00:00.000Z',
];

describeWithClickHouse('rollups of the events on ClickHouse', () => {
  const t: TestApp = useTestApp('clickhouse');
  let owner: TestAccount;
  let website: { id: string; domain: string };
  let other: { id: string; domain: string };

  const read = async (kind: string, query: string) => {
    const response = await t.request('GET', `/api/v1/analytics/${kind}?websiteId=${website.id}${query}`, { token: owner.token });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body as { data: unknown; pagination?: unknown };
  };
  /** The same read with a filter every event passes: answered from the events alone. */
  const fromEvents = (kind: string, query: string) => read(kind, `${query}&filter_hostname=${website.domain}`);

  beforeAll(async () => {
    owner = await createAccount(t);
    website = (await createWebsite(t, owner.token, 'hours.example.com')) as typeof website;
    other = (await createWebsite(t, owner.token, 'other-hours.example.com')) as typeof other;
    const events = traffic(website.id, website.domain);
    // In several INSERTs, so hours are spread over several parts of the rollup.
    for (let i = 0; i < events.length; i += 25) await writeAndDerive(t, events.slice(i, i + 25));
    await writeAndDerive(t, traffic(other.id, other.domain).slice(0, 30));
    await t.app.clickhouse!.relay.settle();
  });

  it('is built at the first start and equals what the events give', async () => {
    const { ch } = t.app.clickhouse!;
    expect(await eventRollupsBuilt(ch)).toBe(true);
    const held = await rollupsHeld(ch, website.id);
    expect(new Set(held.day.map((row) => row.breakdown))).toEqual(new Set(ROLLED_UP_BREAKDOWNS));
    expect(held.day.length).toBeLessThan(held.hour.length);
    expect(held).toEqual(await rollupsRebuilt(ch, website.id));
  });

  it('answers every breakdown over events as the events do, over whole hours, partial ones and none', async () => {
    for (const kind of ROLLED_UP_BREAKDOWNS) {
      for (const range of RANGES) {
        const expected = await fromEvents(kind, range);
        expect(await read(kind, range), `${kind}${range}`).toEqual(expected);
        const paged = `${range}&limit=2&offset=1`;
        expect(await read(kind, paged), `${kind}${paged}`).toEqual(await fromEvents(kind, paged));
      }
    }
  });

  it('reads the rollups: rows taken out of them change the unfiltered answer only', async () => {
    const { ch } = t.app.clickhouse!;
    const before = await read('pages', '');
    await deleteAndWait(ch, 'event_days', sql`website_id = ${website.id} and breakdown = 'pages' and key2 = '/docs'`);
    try {
      const after = (await read('pages', '')).data as { path: string }[];
      expect(after.map((row) => row.path)).not.toContain('/docs');
      expect(await fromEvents('pages', '')).toEqual(before);
    } finally {
      // As after an upgrade: rollups missing, no marker; the first build fills them.
      for (const table of ['event_hours', 'event_days', 'sightline_state']) await deleteAndWait(ch, table, sql`1 = 1`);
      await buildEventRollupsOnce(ch);
    }
    expect(await rollupsHeld(ch, website.id)).toEqual(await rollupsRebuilt(ch, website.id));
    expect(await read('pages', '')).toEqual(before);
  });

  it('computes the days of deleted server goals again', async () => {
    const { ch } = t.app.clickhouse!;
    const goalsBefore = (await read('goals', '')).data as { goal: string }[];
    expect(goalsBefore.length).toBeGreaterThan(0);
    const deleted = await t.app.eventLog.deleteServerGoals(website.id, { name: 'signup', range: null });
    expect(deleted).toBeGreaterThan(0);
    expect(await rollupsHeld(ch, website.id)).toEqual(await rollupsRebuilt(ch, website.id));
    for (const kind of ['goals', 'countries', 'browsers']) {
      for (const range of RANGES) expect(await read(kind, range), `${kind}${range}`).toEqual(await fromEvents(kind, range));
    }
    // The other website's rollups are untouched, and still exact.
    expect(await rollupsHeld(ch, other.id)).toEqual(await rollupsRebuilt(ch, other.id));
  });

  it("takes a deleted website's rollups with its events", async () => {
    const { ch } = t.app.clickhouse!;
    expect((await rollupsHeld(ch, other.id)).day.length).toBeGreaterThan(0);
    await t.app.eventLog.deleteWebsiteEvents(other.id);
    expect(await rollupsHeld(ch, other.id)).toEqual({ hour: [], day: [] });
    expect(await rollupsRebuilt(ch, other.id)).toEqual({ hour: [], day: [] });
  });
});

describe('event rollups: which breakdowns', () => {
  it('keeps the breakdowns over events, and no session breakdown', () => {
    expect(ROLLED_UP_BREAKDOWNS).toEqual(['pages', 'countries', 'regions', 'cities', 'devices', 'browsers', 'operating-systems', 'hostnames', 'goals', 'exit-clicks']);
  });
});
