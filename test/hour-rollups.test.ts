import type { Kysely } from 'kysely';
import { expect, it } from 'vitest';
import { hourRollups } from '../src/db/migrations/0036-hour-rollups.ts';
import type { NewEvent } from '../src/modules/events/event.types.ts';
import type { EventStore } from '../src/modules/stats/event-store.ts';
import { sqlEventStore } from '../src/modules/stats/sql/sql-event-store.ts';
import { timeseries } from '../src/modules/stats/timeseries.service.ts';
import type { TimeseriesQueryInput } from '../src/modules/stats/timeseries.schemas.ts';
import { settleRollups, useTestApp, writeAndDerive } from './helpers/app.ts';
import { rebuilt, rowsOf } from './helpers/derived-tables.ts';
import { migrateAndBuild } from './helpers/derived-data-worker.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { createAccount, createWebsite, newEvent } from './helpers/factories.ts';

// The hourly series from the hour rollups (visitor_hours, hour_totals, hour_recency; migration
// 0036) says exactly what the same series read from the raw events says: random traffic over four
// days (across Paris' change to summer time), written in batches with late visitors, in zones of
// whole-hour offsets (read from the rollups) and of half-hour and 45-minute offsets (read raw),
// over whole days, ranges given to the minute (partial first and last hours), a range within one
// hour, the last 24 hours up to a moment inside the data and up to now; after a server-goal
// delete, a change of the website's zone, and the build migration 0036 marks. The tables equal a
// rebuild from the raw events after each.

const TABLES = ['visitor_hours', 'hour_totals', 'hour_recency'] as const;
const ALL = 'visitors,sessions,pageviews,conversion_rate,revenue,payments';
const HOUR_ZONES = ['UTC', 'Europe/Paris', 'America/New_York'];
const ODD_ZONES = ['Asia/Kolkata', 'Asia/Kathmandu'];
const RANGES: [string, string][] = [
  ['2026-03-28', '2026-03-31'],
  ['2026-03-29T00:15:00Z', '2026-03-30T13:40:00Z'],
  ['2026-03-30T10:05:00Z', '2026-03-30T10:50:00Z'],
  ['2026-03-30T10:05:00Z', '2026-03-30T11:50:00Z'],
  ['2026-03-29T06:00:00Z', '2026-03-29T09:59:59.999Z'],
];

/** A small deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const FIRST = Date.parse('2026-03-28T00:00:00Z');
const MINUTE = 60_000;

/**
 * Visits of 40 visitors over four days: each a session of 1 to 4 events minutes apart, some with a
 * goal or a server goal (deleted later). In time order, except the late visits: whole visits of
 * visitors who have no other visit in that hour, written last.
 */
function traffic(websiteId: string): { onTime: NewEvent[]; late: NewEvent[]; last: number } {
  const next = random(38);
  const onTime: NewEvent[] = [];
  const late: NewEvent[] = [];
  let last = 0;
  for (let v = 0; v < 40; v += 1) {
    const visitorId = `v${v}`;
    let at = FIRST + Math.floor(next() * 600) * MINUTE;
    const visits: NewEvent[][] = [];
    for (let k = 0; at < FIRST + 4 * 1440 * MINUTE; k += 1) {
      const visit: NewEvent[] = [];
      const events = 1 + Math.floor(next() * 4);
      for (let i = 0; i < events; i += 1) {
        const occurredAt = new Date(at + i * 3 * MINUTE).toISOString();
        const kind = next();
        if (kind < 0.1) visit.push(newEvent(websiteId, visitorId, { occurredAt, sessionId: `s-${v}-${k}`, type: 'custom', name: 'signup' }));
        else if (kind < 0.14) visit.push(newEvent(websiteId, visitorId, { occurredAt, type: 'custom', name: 'upgrade', source: 'api', sessionId: null, hostname: null, path: null }));
        else visit.push(newEvent(websiteId, visitorId, { occurredAt, sessionId: `s-${v}-${k}` }));
        last = Math.max(last, Date.parse(occurredAt));
      }
      visits.push(visit);
      // The next visit starts 40 minutes to 14 hours later: visits of a visitor never overlap.
      at += (40 + Math.floor(next() * 800)) * MINUTE;
    }
    const hourOf = (event: NewEvent) => event.occurredAt.slice(0, 13);
    visits.forEach((visit, i) => {
      const hours = new Set(visit.map(hourOf));
      const others = visits.filter((_, j) => j !== i).flat().map(hourOf);
      if (v % 5 === 0 && i % 3 === 1 && !others.some((hour) => hours.has(hour))) late.push(...visit);
      else onTime.push(...visit);
    });
  }
  onTime.sort((a, b) => a.occurredAt.localeCompare(b.occurredAt));
  return { onTime, late, last };
}

describeEachEngine('the hourly series from the hour rollups', (engine) => {
  const t = useTestApp(engine);

  /** The event store, and one whose hour rollups never answer (the raw events do), counting the reads the rollups answered. */
  function stores() {
    const store = sqlEventStore(t.db, settleRollups(t));
    const answered = { count: 0 };
    const counted: EventStore = {
      ...store,
      hourTraffic: async (...args) => {
        const answer = await store.hourTraffic(...args);
        if (answer) answered.count += 1;
        return answer;
      },
    };
    const raw: EventStore = { ...store, hourTraffic: async () => undefined };
    return { counted, raw, answered };
  }

  async function website() {
    const owner = await createAccount(t);
    const site = await createWebsite(t, owner.token);
    const { onTime, late, last } = traffic(site.id);
    for (let i = 0; i < onTime.length; i += 60) await writeAndDerive(t, onTime.slice(i, i + 60));
    await writeAndDerive(t, late);
    expect(late.length).toBeGreaterThan(5);
    return { id: site.id, token: owner.token, last, events: onTime.length + late.length };
  }

  /** Every range in every zone, with every field and with counts only, read from the rollups and raw; how many the rollups answered. */
  async function expectEqualRaw(websiteId: string, extra: { now: Date; query?: Partial<TimeseriesQueryInput> }[] = []) {
    const { counted, raw, answered } = stores();
    const reads: { now: Date; query: Partial<TimeseriesQueryInput> }[] = [
      ...RANGES.map(([startAt, endAt]) => ({ now: new Date(), query: { startAt, endAt } })),
      // The last 24 hours up to a moment inside the data: its current hour goes on after it.
      { now: new Date('2026-03-30T10:20:00Z'), query: {} },
      ...extra.map((read) => ({ now: read.now, query: read.query ?? {} })),
    ];
    let expectedFromRollups = 0;
    for (const timezone of [...HOUR_ZONES, ...ODD_ZONES]) {
      for (const { now, query } of reads) {
        for (const fields of [ALL, 'pageviews,sessions']) {
          const q = { fields, interval: 'hour', timezone, ...query } as TimeseriesQueryInput;
          const label = `${timezone} ${JSON.stringify(query)} ${now.toISOString()} ${fields}`;
          const fromRollups = await timeseries({ db: t.db, store: counted }, websiteId, q, now);
          expect(fromRollups, label).toEqual(await timeseries({ db: t.db, store: raw }, websiteId, q, now));
          if (HOUR_ZONES.includes(timezone)) expectedFromRollups += 1;
        }
      }
    }
    // Whole-hour zones read the rollups, the others the raw events.
    expect(answered.count).toBe(expectedFromRollups);
  }

  async function expectRebuilt(websiteId: string, timezone: string) {
    const again = await rebuilt(t.db, websiteId, timezone);
    const kept: Record<string, string[]> = {};
    for (const table of TABLES) {
      kept[table] = await rowsOf(t.db, table, websiteId);
      expect(kept[table], table).toEqual(again[table]);
    }
    return kept;
  }

  it('answers every hourly series exactly as the raw events do, and equals a rebuild', { timeout: 240_000 }, async () => {
    const site = await website();
    const kept = await expectRebuilt(site.id, 'Europe/Paris');
    expect(kept.visitor_hours!.length).toBeGreaterThan(100);
    // Up to a minute after the last event: its hour is whole in the rollups.
    await expectEqualRaw(site.id, [{ now: new Date(site.last + MINUTE) }]);
    const body = await timeseries({ db: t.db, store: stores().counted }, site.id, { fields: 'pageviews,visitors', interval: 'hour', startAt: '2026-03-28', endAt: '2026-04-01', timezone: 'UTC' } as TimeseriesQueryInput);
    const pageviews = body.data.reduce((sum, bucket) => sum + Number(bucket.pageviews ?? 0), 0);
    const events = await t.db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).where('website_id', '=', site.id).where('type', '=', 'pageview').executeTakeFirstOrThrow();
    expect(pageviews).toBe(Number(events.n));
    expect(pageviews).toBeGreaterThan(100);
  });

  it('reads the hour rows for whole-hour zones, and the raw events for a half-hour zone', async () => {
    const site = await website();
    const q = (timezone: string) => ({ fields: 'pageviews', interval: 'hour', startAt: '2026-03-29', endAt: '2026-03-30', timezone }) as TimeseriesQueryInput;
    const read = (timezone: string) => timeseries({ db: t.db, store: stores().counted }, site.id, q(timezone));
    const [utcBefore, kolkataBefore] = [await read('UTC'), await read('Asia/Kolkata')];
    await t.db.updateTable('hour_totals').set({ pageviews: 1000 }).where('website_id', '=', site.id).where('hour', '>=', '2026-03-29T00').where('hour', '<=', '2026-03-29T23').execute();
    const skewed = await read('UTC');
    expect(skewed).not.toEqual(utcBefore);
    expect(skewed.data.some((bucket) => bucket.pageviews === 1000)).toBe(true);
    expect(await read('Asia/Kolkata')).toEqual(kolkataBefore);
  });

  it('counts the current hour up to now from its row', async () => {
    const owner = await createAccount(t);
    const site = await createWebsite(t, owner.token);
    const now = Date.now();
    const hourStart = Math.floor(now / 3_600_000) * 3_600_000;
    const events = [0, 1, 2, 3, 4].map((i) =>
      newEvent(site.id, `live${i % 3}`, { occurredAt: new Date(Math.max(hourStart, now - (i + 1) * 1000)).toISOString(), sessionId: `live-s${i % 3}` }),
    );
    events.push(newEvent(site.id, 'earlier', { occurredAt: new Date(hourStart - 5 * 3_600_000).toISOString() }));
    await writeAndDerive(t, events);
    const { counted, raw, answered } = stores();
    const q = { fields: ALL, interval: 'hour' } as TimeseriesQueryInput;
    const at = new Date();
    const fromRollups = await timeseries({ db: t.db, store: counted }, site.id, q, at);
    expect(answered.count).toBe(1);
    expect(fromRollups).toEqual(await timeseries({ db: t.db, store: raw }, site.id, q, at));
    // Three live visitors in the current hour (or the one before, at an hour's first seconds) and one five hours ago.
    expect(fromRollups.totals.visitors).toBe(4);
    expect(fromRollups.data.reduce((sum, bucket) => sum + Number(bucket.pageviews ?? 0), 0)).toBe(6);
  });

  it('counts a range the client ended at its own now from the hour row, and one ended earlier exactly', async () => {
    const owner = await createAccount(t);
    const site = await createWebsite(t, owner.token);
    const arrival = Date.now();
    // One event well before the client's end, one after it: between the client's clock and the read's arrival.
    const at = (ms: number) => new Date(arrival - ms).toISOString();
    await writeAndDerive(t, [newEvent(site.id, 'before', { occurredAt: at(8_000) }), newEvent(site.id, 'meanwhile', { occurredAt: at(200) })]);
    const read = async (endMsBefore: number) => {
      const { counted, raw, answered } = stores();
      const q = { fields: 'pageviews,visitors', interval: 'hour', startAt: at(24 * 3_600_000), endAt: at(endMsBefore) } as TimeseriesQueryInput;
      const rollups = await timeseries({ db: t.db, store: counted }, site.id, q, new Date(arrival));
      const exact = await timeseries({ db: t.db, store: raw }, site.id, q, new Date(arrival));
      return { rollups: rollups.totals, exact: exact.totals, answered: answered.count };
    };
    // Ended 500 ms before its arrival: a read up to now, its last hour the row as it stands.
    const upToNow = await read(500);
    expect(upToNow).toEqual({ rollups: { pageviews: 2, visitors: 2 }, exact: { pageviews: 1, visitors: 1 }, answered: 1 });
    // Ended 5 s before: exact to its end (the hour's raw events after it are left out).
    const earlier = await read(5_000);
    expect(earlier.rollups).toEqual(earlier.exact);
    expect(earlier.rollups).toEqual({ pageviews: 1, visitors: 1 });
  });

  it('stays equal to a rebuild and to the raw events after a goal delete, a change of zone and the build the migration marks', { timeout: 400_000 }, async () => {
    const site = await website();
    const before = await expectRebuilt(site.id, 'Europe/Paris');

    const deleted = await t.request('DELETE', '/api/v1/goals', { token: site.token, query: { websiteId: site.id, name: 'upgrade' } });
    expect(deleted.status, deleted.raw).toBe(200);
    const repaired = await expectRebuilt(site.id, 'Europe/Paris');
    expect(repaired).not.toEqual(before);
    await expectEqualRaw(site.id);

    // UTC hours: a new zone changes no row.
    const moved = await t.request('PUT', `/api/v1/admin/websites/${site.id}`, { token: site.token, body: { timezone: 'America/New_York' } });
    expect(moved.status, moved.raw).toBe(200);
    await t.app.derivedDataWorker.settle();
    expect(await expectRebuilt(site.id, 'America/New_York')).toEqual(repaired);
    const route = await t.request('GET', '/api/v1/analytics/timeseries', { token: site.token, query: { websiteId: site.id, fields: ALL, interval: 'hour', startAt: '2026-03-29', endAt: '2026-03-30' } });
    expect(route.status, route.raw).toBe(200);
    const q = { fields: ALL, interval: 'hour', startAt: '2026-03-29', endAt: '2026-03-30' } as TimeseriesQueryInput;
    expect(route.body).toEqual(JSON.parse(JSON.stringify(await timeseries({ db: t.db, store: stores().raw }, site.id, q))));

    const migration = hourRollups(engine);
    const untyped = t.db as unknown as Kysely<unknown>;
    await migrateAndBuild(t, site.id, 'migration 0036: visitor_hours, hour_totals, hour_recency', async () => {
      await migration.down(untyped);
      await migration.up(untyped);
    });
    expect(await expectRebuilt(site.id, 'America/New_York')).toEqual(repaired);
    await expectEqualRaw(site.id);
  });
});
