import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { sessionBuckets } from '../src/db/migrations/0012-session-buckets.ts';
import type { Database } from '../src/db/schema.ts';
import { rebuildSessions } from '../src/modules/analytics/session-rebuild.ts';
import { parseRange } from '../src/modules/goals/tracked-goals.range.ts';
import { sqlEventStore } from '../src/modules/stats/sql/sql-event-store.ts';
import type { StatsScope } from '../src/modules/stats/stats.params.ts';
import { wholeDaysOf } from '../src/modules/stats/whole-days.ts';
import { MARCH, analyticsFixture } from './helpers/analytics-fixture.ts';
import { settleRollups, useTestApp, writeAndDerive } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { newEvent } from './helpers/factories.ts';
import { migrateAndBuild } from './helpers/derived-data-worker.ts';

// The unfiltered overview over whole local days reads the rollups (visitor_recency, daily_totals,
// session_buckets) instead of the raw events; it must say exactly what the raw events say, and
// session_buckets must follow every change to the sessions table.

const QUARTER_HOUR_MS = 15 * 60 * 1000;
const MONEY = { currency: 'USD', includeRenewals: true };

/** session_buckets as the sessions table says they should be, computed here without SQL. */
async function expectedBuckets(db: Kysely<Database>, websiteId: string) {
  const sessions = await db.selectFrom('sessions').select(['started_at', 'ended_at', 'pageviews', 'goals']).where('website_id', '=', websiteId).execute();
  const out = new Map<string, [number, number, number]>();
  for (const s of sessions) {
    const start = new Date(s.started_at).getTime();
    const bucket = new Date(Math.floor(start / QUARTER_HOUR_MS) * QUARTER_HOUR_MS).toISOString();
    const row = out.get(bucket) ?? [0, 0, 0];
    row[0] += 1;
    row[1] += Number(s.pageviews) <= 1 && Number(s.goals) === 0 ? 1 : 0;
    row[2] += new Date(s.ended_at).getTime() - start;
    out.set(bucket, row);
  }
  return [...out].map(([bucket, [sessions, bounces, millis]]) => ({ bucket, sessions, bounces, millis })).sort((a, b) => a.bucket.localeCompare(b.bucket));
}

/** The stored buckets, without those a moved or deleted session emptied. */
async function storedBuckets(db: Kysely<Database>, websiteId: string) {
  const rows = await db.selectFrom('session_buckets').selectAll().where('website_id', '=', websiteId).execute();
  return rows
    .map((r) => ({ bucket: new Date(r.bucket).toISOString(), sessions: Number(r.sessions), bounces: Number(r.bounces), millis: Number(r.millis) }))
    .filter((r) => r.sessions !== 0 || r.bounces !== 0 || r.millis !== 0)
    .sort((a, b) => a.bucket.localeCompare(b.bucket));
}

describeEachEngine('overview from rollups', (engine) => {
  const t = useTestApp(engine);

  it('says what the raw events say, over whole local days and over all time', async () => {
    const f = await analyticsFixture(t);
    const store = sqlEventStore(t.db, settleRollups(t));
    for (const range of [parseRange(MARCH, 'Europe/Paris'), parseRange({ startAt: '2026-03-03', endAt: '2026-03-05' }, 'Europe/Paris'), null]) {
      const wholeDays = wholeDaysOf(range, 'Europe/Paris');
      expect(wholeDays).not.toBeNull();
      const scope: StatsScope = { websiteId: f.website.id, range, timezone: 'Europe/Paris', filters: [], wholeDays };
      const fromRollups = await store.overview(scope, MONEY);
      const fromEvents = await store.overview({ ...scope, wholeDays: null, derivedState: 'building' }, MONEY);
      expect(fromRollups).toEqual(fromEvents);
      expect(fromRollups.sessions).toBeGreaterThan(0);
    }
    // It really read them: a change to the rollups alone shows in it, not in the raw path.
    const scope: StatsScope = { websiteId: f.website.id, range: null, timezone: 'Europe/Paris', filters: [], wholeDays: 'all' };
    await t.db.updateTable('session_buckets').set((eb) => ({ sessions: eb('sessions', '+', 100) })).where('website_id', '=', f.website.id).execute();
    await t.db.updateTable('daily_totals').set((eb) => ({ pageviews: eb('pageviews', '+', 10) })).where('website_id', '=', f.website.id).execute();
    const skewed = await store.overview(scope, MONEY);
    const raw = await store.overview({ ...scope, wholeDays: null, derivedState: 'building' }, MONEY);
    expect([skewed.sessions - raw.sessions, skewed.pageviews - raw.pageviews]).toEqual([400, 30]); // four buckets, three days
    await t.db.updateTable('session_buckets').set((eb) => ({ sessions: eb('sessions', '-', 100) })).where('website_id', '=', f.website.id).execute();
    await t.db.updateTable('daily_totals').set((eb) => ({ pageviews: eb('pageviews', '-', 10) })).where('website_id', '=', f.website.id).execute();

    // The fixture's numbers (helpers/analytics-fixture.ts), through the route.
    const overview = await t.request('GET', '/api/v1/analytics/overview', { token: f.owner.token, query: { websiteId: f.website.id, ...MARCH } });
    expect(overview.body.data[0]).toMatchObject({ visitors: 3, sessions: 4, pageviews: 6, bounce_rate: 50, avg_session_duration: 255000 });
  });

  it('keeps session_buckets equal to the sessions table through ingestion, moves, deletes and the rebuild', async () => {
    const f = await analyticsFixture(t);
    const id = f.website.id;
    expect((await storedBuckets(t.db, id)).length).toBeGreaterThan(1);
    expect(await storedBuckets(t.db, id)).toEqual(await expectedBuckets(t.db, id));

    // An event older than its session's start moves the session to an earlier bucket; a second
    // pageview ends a bounce and lengthens the session.
    const at = (sessionId: string, occurredAt: string) => newEvent(id, 'v2', { sessionId, hostname: f.website.domain, occurredAt, path: '/late' });
    await writeAndDerive(t, [at('s2', '2026-03-02T10:40:00.000Z')]);
    await writeAndDerive(t, [at('s2', '2026-03-02T11:20:00.000Z')]);
    expect(await storedBuckets(t.db, id)).toEqual(await expectedBuckets(t.db, id));

    await t.db.deleteFrom('sessions').where('website_id', '=', id).where('session_id', '=', 's4').execute();
    expect(await storedBuckets(t.db, id)).toEqual(await expectedBuckets(t.db, id));

    await t.db.transaction().execute((trx) => rebuildSessions(trx, id));
    expect(await storedBuckets(t.db, id)).toEqual(await expectedBuckets(t.db, id));
    const all = await t.db.selectFrom('session_buckets').select('sessions').where('website_id', '=', id).execute();
    expect(all.every((row) => Number(row.sessions) > 0)).toBe(true);
  });

  it('migration 0012 marks a build that fills the buckets of the sessions already stored', async () => {
    const f = await analyticsFixture(t);
    const before = await storedBuckets(t.db, f.website.id);
    const migration = sessionBuckets(engine);
    const untyped = t.db as unknown as Kysely<unknown>;
    await migrateAndBuild(t, f.website.id, 'migration 0012: session_buckets', async () => {
      await migration.down(untyped);
      await migration.up(untyped);
    });
    expect(await storedBuckets(t.db, f.website.id)).toEqual(before);
  });
});

describe('whole local days of a range', () => {
  it('are the days a range covers from midnight to midnight, in any real offset', () => {
    expect(wholeDaysOf(null, 'Europe/Paris')).toBe('all');
    expect(wholeDaysOf(parseRange(MARCH, 'Europe/Paris'), 'Europe/Paris')).toEqual({ first: '2026-03-01', last: '2026-03-31' });
    // Across the change to summer time (29 March) and in a zone 5:45 ahead of UTC.
    expect(wholeDaysOf(parseRange({ startAt: '2026-03-29', endAt: '2026-03-29' }, 'Europe/Paris'), 'Europe/Paris')).toEqual({ first: '2026-03-29', last: '2026-03-29' });
    expect(wholeDaysOf(parseRange(MARCH, 'Asia/Kathmandu'), 'Asia/Kathmandu')).toEqual({ first: '2026-03-01', last: '2026-03-31' });
  });

  it('are none when a bound falls inside a day or off a quarter hour of UTC', () => {
    expect(wholeDaysOf({ from: '2026-03-01T00:00:00.000Z', to: '2026-03-02T12:00:00.000Z' }, 'UTC')).toBeNull();
    expect(wholeDaysOf({ from: '2026-03-01T00:00:00.000Z', to: '2026-03-02T00:00:00.000Z' }, 'Europe/Paris')).toBeNull();
    // Liberia kept 44.5 minutes behind UTC until 1972: its midnights are off the quarter hours.
    expect(wholeDaysOf(parseRange({ startAt: '1971-03-01', endAt: '1971-03-02' }, 'Africa/Monrovia'), 'Africa/Monrovia')).toBeNull();
  });
});
