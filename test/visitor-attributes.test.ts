import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { rebuildVisitorTotals } from '../src/modules/analytics/visitor-totals.ts';
import { sqlEventStore } from '../src/modules/stats/sql/sql-event-store.ts';
import type { StatsScope } from '../src/modules/stats/stats.params.ts';
import { attributeBit } from '../src/modules/analytics/visitor-attributes.ts';
import { analyticsFixture } from './helpers/analytics-fixture.ts';
import { ATTRIBUTE_FILTER_SETS, EVERYTHING } from './helpers/attribute-filters.ts';
import { settleRollups, useTestApp, writeAndDerive } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { newEvent } from './helpers/factories.ts';

// visitor_totals keeps each visitor's attributes (country, region, city, device, browser, os),
// the bits of those on which their events disagree, and their latest event with a page. The
// visitor list filtered on attributes alone, all time, reads those rows for the visitors whose
// filtered attributes never varied and the raw events for the others: it must say exactly what
// the raw read says, and the rows must equal a rebuild whether the disagreement arrived within
// one batch or across batches.

const PAGES = [
  { limit: 100, offset: 0 },
  { limit: 1, offset: 1 },
  { limit: 2, offset: 2 },
  { limit: 5, offset: 50 },
];

describeEachEngine('visitor attributes in visitor_totals', (engine) => {
  const t = useTestApp(engine);

  /** The fixture's v1-v3 (v1's later events know no region or city), and visitors whose attributes vary or tie. */
  async function website() {
    const f = await analyticsFixture(t);
    const at = (visitorId: string, occurredAt: string, extra: object = {}) =>
      newEvent(f.website.id, visitorId, { sessionId: `s-${visitorId}`, hostname: f.website.domain, path: '/docs', device: 'desktop', browser: 'Firefox', os: 'Linux', occurredAt, ...extra });
    // v8 travels within one batch; v9's city changes in a later batch; v10's two pages share a time.
    await writeAndDerive(t, [
      at('v8', '2026-03-04T08:00:00.000Z', { country: 'US' }),
      at('v8', '2026-03-04T09:00:00.000Z', { country: 'FR', path: '/fr' }),
      at('v9', '2026-03-04T10:00:00.000Z', { country: 'US', details: { region: 'Texas', city: 'Austin' } }),
      at('v10', '2026-03-04T11:00:00.000Z', { country: 'FR', path: '/a', os: 'Windows' }),
      at('v10', '2026-03-04T11:00:00.000Z', { country: 'FR', path: '/b', os: 'Windows' }),
    ]);
    await writeAndDerive(t, [
      at('v9', '2026-03-04T12:00:00.000Z', { country: 'US', details: { region: 'Texas', city: 'Dallas' } }),
      at('v10', '2026-03-04T12:00:00.000Z', { country: 'FR', type: 'custom', name: 'signup', path: null, os: 'Windows' }),
    ]);
    return f;
  }

  async function rows(websiteId: string) {
    const found = await t.db.selectFrom('visitor_totals').selectAll().where('website_id', '=', websiteId).orderBy('visitor_id').execute();
    return found.map((row) => ({ ...row, latest_at: row.latest_at === null ? null : new Date(row.latest_at).toISOString(), varied: Number(row.varied) }));
  }

  it('keep each visitor attribute, the bits of those that varied and the latest event with a page, as a rebuild derives them', async () => {
    const f = await website();
    const ingested = await rows(f.website.id);
    const byVisitor = new Map(ingested.map((row) => [row.visitor_id, row]));
    expect(byVisitor.get('v8')).toMatchObject({ varied: attributeBit('country'), country: null, device: 'desktop' });
    expect(byVisitor.get('v9')).toMatchObject({ varied: attributeBit('city'), region: 'Texas', country: 'US', city: null });
    expect(byVisitor.get('v1')).toMatchObject({ varied: attributeBit('region') | attributeBit('city'), country: 'US', device: 'desktop' });
    expect(byVisitor.get('v2')).toMatchObject({ varied: 0, country: 'DE', browser: 'Firefox', os: 'Android', device: 'mobile' });
    // The latest event with a page: the raw order (time, then id, both descending); a goal without a page is not one.
    const { rows: latest } = await sql<{ visitor_id: string; id: string }>`
      select visitor_id, id from (
        select visitor_id, id, row_number() over (partition by visitor_id order by occurred_at desc, id desc) as rn
        from events where website_id = ${f.website.id} and path is not null) x where rn = 1`.execute(t.db);
    expect(latest.length).toBe(ingested.length);
    for (const row of latest) expect(byVisitor.get(row.visitor_id)?.latest_event_id, row.visitor_id).toBe(row.id);
    expect(byVisitor.get('v10')?.latest_at).toBe('2026-03-04T11:00:00.000Z');

    await t.db.transaction().execute((trx) => rebuildVisitorTotals(trx, f.website.id));
    expect(await rows(f.website.id)).toEqual(ingested);
  });

  it('give the visitor list filtered on them, all time, exactly what the raw events give, for every page', async () => {
    const f = await website();
    const store = sqlEventStore(t.db, settleRollups(t));
    for (const filters of ATTRIBUTE_FILTER_SETS) {
      const scope: StatsScope = { websiteId: f.website.id, range: null, timezone: 'UTC', filters };
      for (const page of PAGES) {
        const fromTotals = await store.visitors(scope, {}, page);
        const fromEvents = await store.visitors({ ...scope, range: EVERYTHING }, {}, page);
        expect(fromTotals, JSON.stringify({ filters, page })).toEqual(fromEvents);
      }
    }
    const us = await store.visitors({ websiteId: f.website.id, range: null, timezone: 'UTC', filters: ATTRIBUTE_FILTER_SETS[0]! }, {}, { limit: 100, offset: 0 });
    // v8 is last seen on its US page only; v1 varied on region, not on country, so it passes whole.
    expect(us.rows.map((row) => [row.visitorId, row.lastSeenAt])).toEqual([
      ['v3', '2026-03-05T09:00:00.000Z'],
      ['v9', '2026-03-04T12:00:00.000Z'],
      ['v8', '2026-03-04T08:00:00.000Z'],
      ['v1', '2026-03-02T10:07:00.000Z'],
    ]);
    expect(us.total).toBe(4);
  });

  it('read the stored rows for steady visitors and the raw events for varied ones', async () => {
    const f = await website();
    const store = sqlEventStore(t.db, settleRollups(t));
    await t.db.updateTable('visitor_totals').set({ last_at: '2030-01-01T00:00:00.000Z' }).where('website_id', '=', f.website.id).execute();
    const scope: StatsScope = { websiteId: f.website.id, range: null, timezone: 'UTC', filters: ATTRIBUTE_FILTER_SETS[0]! };
    const skewed = new Map((await store.visitors(scope, {}, { limit: 100, offset: 0 })).rows.map((row) => [row.visitorId, row.lastSeenAt]));
    // v3 never varied: its stored row is read. v8's country varied: its events are.
    expect(skewed.get('v3')).toBe('2030-01-01T00:00:00.000Z');
    expect(skewed.get('v8')).toBe('2026-03-04T08:00:00.000Z');
  });

  it('answer the filtered route with the documented pagination', async () => {
    const f = await website();
    const listed = await t.request('GET', '/api/v1/visitors', { token: f.owner.token, query: { websiteId: f.website.id, filter_country: 'US', limit: '2', offset: '1' } });
    expect(listed.status).toBe(200);
    expect(listed.body.pagination).toEqual({ limit: 2, offset: 1, total: 4, hasMore: true });
    expect(listed.body.data.map((row: { visitorId: string }) => row.visitorId)).toEqual(['v9', 'v8']);
  });
});
