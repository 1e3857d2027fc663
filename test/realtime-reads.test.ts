import { expect, it } from 'vitest';
import { sqlEventStore } from '../src/modules/stats/sql/sql-event-store.ts';
import { useTestApp, writeAndDerive } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { createAccount, createWebsite, newEvent } from './helpers/factories.ts';

// Who is online (GET /api/v1/analytics/realtime and the live map's visitors) from visitor_totals'
// latest event per visitor (src/modules/stats/sql/live-sql.ts), against the same reads from the
// raw events: visitors on both sides of the window's edge, one whose latest event arrived late
// (recorded after an older one), a goal without a page view; and, while a build runs, the raw
// events, whatever visitor_totals says.

describeEachEngine('realtime reads from each visitor\'s latest event', (engine) => {
  const t = useTestApp(engine);
  const noSettle = async () => {};

  async function website() {
    const owner = await createAccount(t);
    const site = await createWebsite(t, owner.token);
    const ago = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();
    const event = (visitor: string, minutes: number, extra: Parameters<typeof newEvent>[2] = {}) => newEvent(site.id, visitor, { occurredAt: ago(minutes), ...extra });
    await writeAndDerive(t, [
      event('came-back', 30),
      event('came-back', 2),
      event('left', 7),
      event('just-outside', 5.5),
      event('goal-only', 1, { type: 'custom', name: 'signup', path: null }),
      event('late', 12),
    ]);
    // Recorded after its later event: an older event must not move the visitor's latest back.
    await writeAndDerive(t, [event('late', 3), event('late', 20)]);
    return { id: site.id, token: owner.token, since: (minutes: number) => ago(minutes) };
  }

  it('counts and lists the visitors online as the raw events do', async () => {
    const site = await website();
    const store = sqlEventStore(t.db, noSettle);
    for (const minutes of [5, 10, 60]) {
      const since = site.since(minutes);
      const fromTotals = await store.liveVisitors(site.id, since, 'ready');
      expect(fromTotals, `${minutes} minutes`).toBe(await store.liveVisitors(site.id, since, 'building'));
      const mapFromTotals = await store.liveMap(site.id, since, 'ready');
      expect(mapFromTotals, `${minutes} minutes`).toEqual(await store.liveMap(site.id, since, 'building'));
    }
    expect(await store.liveVisitors(site.id, site.since(5), 'ready')).toBe(3);
    expect((await store.liveMap(site.id, site.since(10), 'ready')).visitors.map((visitor) => visitor.visitorId)).toEqual(['goal-only', 'came-back', 'late', 'just-outside', 'left']);

    const route = await t.request('GET', '/api/v1/analytics/realtime', { token: site.token, query: { websiteId: site.id } });
    expect(route.status, route.raw).toBe(200);
    expect(route.body.data).toEqual([{ visitors: 3 }]);
  });

  it('reads visitor_totals when the website is ready, and the raw events while a build runs', async () => {
    const site = await website();
    const store = sqlEventStore(t.db, noSettle);
    const since = site.since(5);
    // Rows a build has not reached yet hold no newer event: here, every visitor's latest moved back an hour.
    await t.db.updateTable('visitor_totals').set({ last_at: site.since(60) }).where('website_id', '=', site.id).where('visitor_id', '=', 'came-back').execute();
    expect(await store.liveVisitors(site.id, since, 'ready')).toBe(2);
    expect(await store.liveVisitors(site.id, since, 'moving')).toBe(2);
    expect(await store.liveVisitors(site.id, since, 'building')).toBe(3);
    expect((await store.liveMap(site.id, since, 'building')).visitors.map((visitor) => visitor.visitorId)).toContain('came-back');
  });
});
