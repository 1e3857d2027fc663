import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { deleteAndWait } from '../src/db/clickhouse/mutations.ts';
import { CLOSE_AFTER_MS, SESSION_ROLLED_UP, closeSessions, rebuildSessionRollups, sessionDaysOf, sessionsClosedUntil } from '../src/modules/events/clickhouse-session-rollups.ts';
import type { NewEvent } from '../src/modules/events/event.types.ts';
import { type TestAccount, createAccount, createWebsite, newEvent } from './helpers/factories.ts';
import { type TestApp, useTestApp, writeAndDerive } from './helpers/app.ts';
import { describeWithClickHouse } from './helpers/clickhouse.ts';
import { sessionRollupsHeld, sessionRollupsRebuilt } from './helpers/session-rollups.ts';

// The overview's session counts and the session breakdowns read rollups on
// ClickHouse for the hours whose sessions are complete, and the events for the later ones. These
// tests check that each answer is the one the events give (the same read with a filter that every
// event passes goes to the events alone), over ranges within the closed hours, across their end
// and after it, and that the rollups stay equal to a computation from the events after an event
// reaches a closed session, after deletes, and after a closing cut by a crash.

const HOUR = 3_600_000;
const PATHS = ['/', '/pricing', '/docs', '/blog/a'];
const SOURCES = ['Google', 'Hacker News', null];
/** Campaign values, some with the packing's own characters (a comma, a leading N or K, hex digits). */
const CAMPAIGNS = ['spring', 'a,b', null, 'N', ''];
const SOURCES_UTM = ['news,letter', null, 'K61'];

/** `count` events from `start`, `stepMinutes` apart, in sessions of `perSession` events, with goals and events without a page. */
function traffic(websiteId: string, domain: string, start: number, count: number, stepMinutes: number, perSession: number, tag: string): NewEvent[] {
  return Array.from({ length: count }, (_, i) => {
    const visitor = `${tag}v${i % 7}`;
    const session = Math.floor(i / perSession);
    const kind = i % 9 === 4 ? 'goal' : i % 13 === 6 ? 'click' : 'pageview';
    const extra: Partial<NewEvent> =
      kind === 'goal'
        ? { type: 'custom', name: i % 2 === 0 ? 'signup' : 'purchase', source: i % 4 === 0 ? 'api' : 'browser' }
        : kind === 'click'
          ? { type: 'external_link', details: { linkUrl: 'https://github.com/acme' } }
          : {};
    return newEvent(websiteId, visitor, {
      sessionId: `${tag}s-${visitor}-${session}`,
      hostname: domain,
      path: PATHS[(i * 3) % PATHS.length]!,
      occurredAt: new Date(start + i * stepMinutes * 60_000 + (i % 5) * 7_000).toISOString(),
      ...extra,
      details: {
        referrerSource: SOURCES[session % SOURCES.length],
        utmCampaign: CAMPAIGNS[session % CAMPAIGNS.length],
        utmSource: SOURCES_UTM[session % SOURCES_UTM.length],
        viaParam: session % 4 === 1 ? 'friend' : null,
        ...(extra.details ?? {}),
      },
    });
  });
}

const iso = (ms: number) => new Date(ms).toISOString();

describeWithClickHouse('rollups of the sessions on ClickHouse', () => {
  const t: TestApp = useTestApp('clickhouse');
  const now = Date.now();
  let owner: TestAccount;
  let website: { id: string; domain: string };
  let other: { id: string; domain: string };
  let ranges: string[];

  const read = async (kind: string, query: string) => {
    const response = await t.request('GET', `/api/v1/analytics/${kind}?websiteId=${website.id}${query}`, { token: owner.token });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body as { data: unknown; pagination?: unknown };
  };
  /** The same read with a filter every event passes: answered from the events alone. */
  const fromEvents = (kind: string, query: string) => read(kind, `${query}&filter_hostname=${website.domain}`);
  const expectEventsAnswer = async (kinds: string[]) => {
    for (const kind of kinds) {
      for (const range of ranges) expect(await read(kind, range), `${kind}${range}`).toEqual(await fromEvents(kind, range));
    }
  };
  const expectExact = async (ch = t.app.clickhouse!.ch) => {
    for (const id of [website.id, other.id]) expect(await sessionRollupsHeld(ch, id)).toEqual(await sessionRollupsRebuilt(ch, id));
  };

  /** Writes the events and ships them, each call a shipment of its own. */
  const ship = async (events: NewEvent[]) => {
    await writeAndDerive(t, events);
    await t.app.clickhouse!.relay.settle();
  };

  beforeAll(async () => {
    owner = await createAccount(t);
    website = (await createWebsite(t, owner.token, 'sessions.example.com')) as typeof website;
    other = (await createWebsite(t, owner.token, 'other-sessions.example.com')) as typeof other;
    // Long closed: 90 events over 60 hours in March. Recent: sessions of three hours over the last
    // 30, some starting before the closed hours end and going on after.
    const march = traffic(website.id, website.domain, Date.parse('2026-03-02T06:00:00.000Z'), 90, 40, 5, 'm');
    const recent = traffic(website.id, website.domain, now - 30 * HOUR, 60, 29, 6, 'r');
    for (let i = 0; i < march.length; i += 30) await ship(march.slice(i, i + 30));
    await ship(recent);
    await ship(traffic(other.id, other.domain, Date.parse('2026-03-02T06:00:00.000Z'), 30, 40, 5, 'o'));
    const closedUntil = (await sessionsClosedUntil(t.app.clickhouse!.ch))!;
    ranges = [
      '',
      '&startAt=2026-03-02&endAt=2026-03-04',
      '&startAt=2026-03-02&endAt=2026-03-03&timezone=Asia/Kolkata',
      '&startAt=2026-03-02T09:20:00.000Z&endAt=2026-03-04T07:45:00.000Z',
      '&startAt=2026-03-02T10:10:00.000Z&endAt=2026-03-02T10:50:00.000Z',
      // Across the end of the closed hours, after it, and ending inside them.
      `&startAt=${iso(closedUntil - 5 * HOUR - 20 * 60_000)}&endAt=${iso(now + HOUR)}`,
      `&startAt=${iso(closedUntil + 30 * 60_000)}&endAt=${iso(now + HOUR)}`,
      `&startAt=${iso(closedUntil - 40 * HOUR)}&endAt=${iso(closedUntil - 90 * 60_000)}`,
    ];
  });

  it('closes the hours a day and an hour old, and holds what the events give', async () => {
    const { ch } = t.app.clickhouse!;
    const closedUntil = await sessionsClosedUntil(ch);
    expect(closedUntil).toBe(Math.floor((now - CLOSE_AFTER_MS) / HOUR) * HOUR);
    const held = await sessionRollupsHeld(ch, website.id);
    expect(new Set(held.day.map((row) => row.breakdown))).toEqual(new Set(['overview', ...SESSION_ROLLED_UP]));
    expect(held.hour.length).toBeGreaterThan(held.day.length);
    await expectExact();
  });

  it('answers the overview and the session breakdowns as the events do, closed hours or not', async () => {
    await expectEventsAnswer(['overview', ...SESSION_ROLLED_UP]);
    for (const kind of SESSION_ROLLED_UP) {
      const paged = `${ranges[0]}&limit=2&offset=1`;
      expect(await read(kind, paged), `${kind}${paged}`).toEqual(await fromEvents(kind, paged));
    }
    const [overview] = (await read('overview', '')).data as Record<string, number>[];
    expect(overview!.visitors).toBeGreaterThan(0);
  });

  it('reads the rollups: rows taken out of them change the unfiltered answer only', async () => {
    const { ch } = t.app.clickhouse!;
    const before = await read('entry-pages', '');
    await deleteAndWait(ch, 'session_days', sql`website_id = ${website.id} and breakdown = 'entry-pages' and key2 = '/docs' and bucket < toDateTime('2026-04-01 00:00:00')`);
    try {
      const after = (await read('entry-pages', '')).data as { path: string }[];
      expect(after).not.toEqual(before.data);
      expect(await fromEvents('entry-pages', '')).toEqual(before);
    } finally {
      const march = ['2026-03-03T12:00:00.000Z', '2026-03-05T12:00:00.000Z'].map((at) => ({ website_id: website.id, occurred_ms: Date.parse(at) }));
      await t.app.clickhouse!.relay.exclusive(() => rebuildSessionRollups(ch, sessionDaysOf(march)));
    }
    await expectExact();
    expect(await read('entry-pages', '')).toEqual(before);
  });

  it('computes a closed session again when an event reaches it late', async () => {
    const before = await read('overview', '&startAt=2026-03-02&endAt=2026-03-05');
    // More pageviews in the first March session: one before its start (it now starts the day
    // before, with another entry page), two after (another exit page, a longer session).
    const first = traffic(website.id, website.domain, Date.parse('2026-03-02T06:00:00.000Z'), 1, 40, 5, 'm')[0]!;
    await ship([{ ...first, path: '/earlier', occurredAt: '2026-03-01T23:30:00.000Z' }]);
    await expectExact();
    await ship([
      { ...first, path: '/late', occurredAt: '2026-03-02T06:20:00.000Z' },
      { ...first, path: '/later', occurredAt: '2026-03-02T08:30:00.000Z' },
    ]);
    await expectExact();
    await expectEventsAnswer(['overview', 'entry-pages', 'exit-pages', 'campaigns']);
    expect(await read('overview', '&startAt=2026-03-02&endAt=2026-03-05')).not.toEqual(before);
  });

  it('computes the sessions of deleted server goals again', async () => {
    const deleted = await t.app.eventLog.deleteServerGoals(website.id, { name: 'signup', range: null });
    expect(deleted).toBeGreaterThan(0);
    await expectExact();
    await expectEventsAnswer(['overview', 'referrers']);
  });

  it('deletes what a closing cut by a crash wrote beyond its record, then closes again', async () => {
    const { ch, relay } = t.app.clickhouse!;
    const closedUntil = (await sessionsClosedUntil(ch))!;
    // As if a closing had written the next hours and died before recording them.
    await ch.command(sql`insert into session_hours select website_id, breakdown, bucket + 7200, key1, key1_null, key2, key2_null, visitors, pageviews, sessions, bounces, millis
      from session_hours where website_id = ${website.id} and bucket >= toDateTime(${(closedUntil - 2 * HOUR) / 1000}) and bucket < toDateTime(${closedUntil / 1000})`);
    await relay.exclusive(() => closeSessions(ch, now + 3 * HOUR));
    expect(await sessionsClosedUntil(ch)).toBe(closedUntil + 3 * HOUR);
    await expectExact();
    await expectEventsAnswer(['overview', 'entry-pages']);
  });

  it('builds them again from empty tables when nothing is recorded (an upgrade from rollups that kept less)', async () => {
    const { ch, relay } = t.app.clickhouse!;
    const closedUntil = (await sessionsClosedUntil(ch))!;
    // An older release's rows, under a record of another name that this release does not read.
    await ch.command(sql`insert into session_days select website_id, breakdown, bucket, 'older', key1_null, key2, key2_null, visitors, pageviews, sessions, bounces, millis
      from session_days where website_id = ${website.id} and breakdown = 'entry-pages'`);
    await deleteAndWait(ch, 'sightline_state', sql`name like 'sessions closed until%'`);
    expect(await sessionsClosedUntil(ch)).toBeNull();
    await relay.exclusive(() => closeSessions(ch, now + 3 * HOUR));
    expect(await sessionsClosedUntil(ch)).toBe(closedUntil);
    await expectExact();
    await expectEventsAnswer(['overview', 'entry-pages', 'campaigns']);
  });

  it("takes a deleted website's session rollups with its events", async () => {
    const { ch } = t.app.clickhouse!;
    expect((await sessionRollupsHeld(ch, other.id)).day.length).toBeGreaterThan(0);
    await t.app.eventLog.deleteWebsiteEvents(other.id);
    expect(await sessionRollupsHeld(ch, other.id)).toEqual({ hour: [], day: [] });
  });
});

describe('session rollups: which breakdowns', () => {
  it('keeps every session breakdown, campaigns with their eight keys packed into one', () => {
    expect(SESSION_ROLLED_UP).toEqual(['entry-pages', 'exit-pages', 'referrers', 'campaigns']);
  });

  it('takes an event to the days a session it changes may have started in', () => {
    const days = sessionDaysOf([{ website_id: 'w', occurred_ms: Date.parse('2026-03-03T05:00:00.000Z') }]);
    expect([...days.get('w')!].map((day) => new Date(day * 1000).toISOString().slice(0, 10))).toEqual(['2026-03-02', '2026-03-03', '2026-03-04']);
  });
});
