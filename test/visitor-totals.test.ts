import { type Kysely, sql } from 'kysely';
import { expect, it } from 'vitest';
import { visitorTotals } from '../src/db/migrations/0015-visitor-totals.ts';
import { visitorAttributes } from '../src/db/migrations/0016-visitor-attributes.ts';
import { variedVisitorsRecent } from '../src/db/migrations/0037-varied-visitors-recent.ts';
import type { Database } from '../src/db/schema.ts';
import { rebuildVisitorTotals } from '../src/modules/analytics/visitor-totals.ts';
import { sqlEventStore } from '../src/modules/stats/sql/sql-event-store.ts';
import type { StatsScope } from '../src/modules/stats/stats.params.ts';
import { analyticsFixture } from './helpers/analytics-fixture.ts';
import { settleRollups, useTestApp, writeAndDerive } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { newEvent } from './helpers/factories.ts';
import { migrateAndBuild } from './helpers/derived-data-worker.ts';

// The visitor list without a range or filter reads visitor_totals (one row per visitor) instead
// of grouping every event: it must say exactly what the raw events say (rows, order, totals,
// pages), and the rows must equal a rebuild after ingestion, a server goal delete and the migration.

/** A range around every event of the tests: the same events, read from the raw table. */
const EVERYTHING = { from: '2000-01-01T00:00:00.000Z', to: '2100-01-01T00:00:00.000Z' };

async function totalsRows(db: Kysely<Database>, websiteId: string) {
  const rows = await db.selectFrom('visitor_totals').selectAll().where('website_id', '=', websiteId).orderBy('visitor_id').execute();
  const iso = (value: string | null) => (value === null ? null : new Date(value).toISOString());
  return rows.map((row) => ({ ...row, first_at: iso(row.first_at), last_at: iso(row.last_at), latest_at: iso(row.latest_at), pageviews: Number(row.pageviews), events: Number(row.events), varied: Number(row.varied) }));
}

describeEachEngine('the visitor list from visitor_totals', (engine) => {
  const t = useTestApp(engine);

  async function website() {
    const f = await analyticsFixture(t);
    const at = (visitorId: string, occurredAt: string, extra: object = {}) =>
      newEvent(f.website.id, visitorId, { sessionId: `s-${visitorId}`, hostname: f.website.domain, path: '/docs', occurredAt, ...extra });
    await writeAndDerive(t, [at('v4', '2026-03-06T08:00:00.000Z'), at('v4', '2026-03-06T08:01:00.000Z'), at('v5', '2026-03-06T08:01:00.000Z')]);
    // Later writes: an event older than v4's first (a client's retry), a goal, and server goals of v7's and v4's.
    await writeAndDerive(t, [at('v4', '2026-03-01T07:00:00.000Z'), at('v5', '2026-03-07T09:00:00.000Z', { type: 'custom', name: 'newsletter', path: null })]);
    await writeAndDerive(t, [
      newEvent(f.website.id, 'v7', { type: 'custom', name: 'upgrade', source: 'api', sessionId: null, hostname: null, path: null, occurredAt: '2026-03-08T10:00:00.000Z' }),
      newEvent(f.website.id, 'v4', { type: 'custom', name: 'upgrade', source: 'api', sessionId: null, hostname: null, path: null, occurredAt: '2026-03-09T10:00:00.000Z' }),
    ]);
    return f;
  }

  it('says what the raw events say, for every page of rows', async () => {
    const f = await website();
    const store = sqlEventStore(t.db, settleRollups(t));
    const scope: StatsScope = { websiteId: f.website.id, range: null, timezone: 'UTC', filters: [] };
    for (const page of [{ limit: 100, offset: 0 }, { limit: 2, offset: 1 }, { limit: 2, offset: 4 }, { limit: 5, offset: 50 }]) {
      const fromTotals = await store.visitors(scope, {}, page);
      const fromEvents = await store.visitors({ ...scope, range: EVERYTHING }, {}, page);
      expect(fromTotals, JSON.stringify(page)).toEqual(fromEvents);
    }
    const all = await store.visitors(scope, {}, { limit: 100, offset: 0 });
    expect(all.total).toBe(6);
    expect(all.rows.map((row) => row.visitorId)).toEqual(['v4', 'v7', 'v5', 'v3', 'v2', 'v1']);

    // It really read them: a change to visitor_totals alone shows in the all-time list only.
    await t.db.updateTable('visitor_totals').set({ last_at: '2030-01-01T00:00:00.000Z' }).where('website_id', '=', f.website.id).where('visitor_id', '=', 'v1').execute();
    const skewed = await store.visitors(scope, {}, { limit: 100, offset: 0 });
    const raw = await store.visitors({ ...scope, range: EVERYTHING }, {}, { limit: 100, offset: 0 });
    expect(skewed.rows.map((row) => [row.visitorId, row.lastSeenAt])[0]).toEqual(['v1', '2030-01-01T00:00:00.000Z']);
    expect(raw.rows.map((row) => row.visitorId)).toEqual(['v4', 'v7', 'v5', 'v3', 'v2', 'v1']);
  });

  it('answers the route with the documented pagination', async () => {
    const f = await website();
    const listed = await t.request('GET', '/api/v1/visitors', { token: f.owner.token, query: { websiteId: f.website.id, limit: '2', offset: '1' } });
    expect(listed.status).toBe(200);
    expect(listed.body.pagination).toEqual({ limit: 2, offset: 1, total: 6, hasMore: true });
    expect(listed.body.data.map((row: { visitorId: string }) => row.visitorId)).toEqual(['v7', 'v5']);
  });

  it('equal a rebuild after ingestion, a server goal delete and the migration', async () => {
    const f = await website();
    const id = f.website.id;
    const ingested = await totalsRows(t.db, id);
    // v4's first event arrived after later ones: its first visit moved back.
    expect(ingested.find((row) => row.visitor_id === 'v4')).toMatchObject({ first_at: '2026-03-01T07:00:00.000Z', last_at: '2026-03-09T10:00:00.000Z', pageviews: 3, events: 4 });
    await t.db.transaction().execute((trx) => rebuildVisitorTotals(trx, id));
    expect(await totalsRows(t.db, id)).toEqual(ingested);

    // v7's only event is a server goal: deleting it removes v7; v4 keeps its other events.
    for (const name of ['upgrade', 'newsletter']) {
      const deleted = await t.request('DELETE', '/api/v1/goals', { token: f.owner.token, query: { websiteId: id, name } });
      expect(deleted.status).toBe(200);
    }
    const repaired = await totalsRows(t.db, id);
    expect(repaired.map((row) => row.visitor_id)).not.toContain('v7');
    expect(repaired.find((row) => row.visitor_id === 'v4')).toMatchObject({ last_at: '2026-03-06T08:01:00.000Z', events: 3 });
    await t.db.transaction().execute((trx) => rebuildVisitorTotals(trx, id));
    expect(await totalsRows(t.db, id)).toEqual(repaired);

    // Both migrations down and up again: each marks a build, which derives the rows with 0016's columns.
    const untyped = t.db as unknown as Kysely<unknown>;
    await migrateAndBuild(t, id, 'migration 0015: visitor_totals', async () => {
      // Migrations 0033's and 0037's partial indexes read 0016's columns: they go first and come back last, as the migrations stack.
      await variedVisitorsRecent().down(untyped);
      await untyped.schema.dropIndex('visitor_totals_converted_idx').execute();
      await visitorAttributes(engine).down(untyped);
      await visitorTotals(engine).down(untyped);
      await visitorTotals(engine).up(untyped);
      await visitorAttributes(engine).up(untyped);
      await untyped.schema.createIndex('visitor_totals_converted_idx').on('visitor_totals').column('website_id').where(sql.ref('goals'), '>', 0).execute();
      await variedVisitorsRecent().up(untyped);
      expect(await t.db.selectFrom('derived_builds').select('phase').where('website_id', '=', id).executeTakeFirst()).toEqual({ phase: 'clear-all' });
    });
    expect(await totalsRows(t.db, id)).toEqual(repaired);
  });
});
