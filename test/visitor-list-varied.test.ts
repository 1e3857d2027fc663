import { expect, it } from 'vitest';
import { sqlEventStore } from '../src/modules/stats/sql/sql-event-store.ts';
import type { StatsScope } from '../src/modules/stats/stats.params.ts';
import { analyticsFixture } from './helpers/analytics-fixture.ts';
import { ATTRIBUTE_FILTER_SETS, EVERYTHING } from './helpers/attribute-filters.ts';
import { settleRollups, useTestApp, writeAndDerive } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { newEvent } from './helpers/factories.ts';

// The visitor list filtered on visitor attributes, all time, walks the varied visitors newest
// first a batch of 200 at a time and stops once no visitor left can reach the page
// (src/modules/stats/sql/visitor-list-varied.ts), and counts the steady ones from profile_totals.
// With more varied visitors than a batch, interleaved in time with steady ones, and varied
// visitors whose latest event fails the filter (so their place in the list is earlier than their
// last visit), every page must be what the raw events give, the deep ones included.

const VARIED = 450;
const STEADY = 150;
const PAGES = [
  { limit: 10, offset: 0 },
  { limit: 25, offset: 190 },
  { limit: 50, offset: 380 },
  { limit: 100, offset: 520 },
  { limit: 7, offset: 10_000 },
];

describeEachEngine('the visitor list filtered on attributes, with many varied visitors', (engine) => {
  const t = useTestApp(engine);

  it('gives every page and the total exactly as the raw events do', async () => {
    const f = await analyticsFixture(t);
    const base = Date.parse('2026-03-10T00:00:00.000Z');
    const at = (minutes: number) => new Date(base + minutes * 60_000).toISOString();
    const event = (visitorId: string, occurredAt: string, extra: object) =>
      newEvent(f.website.id, visitorId, { sessionId: `s-${visitorId}`, hostname: f.website.domain, path: '/docs', browser: 'Firefox', os: 'Linux', occurredAt, ...extra });
    const events = [];
    for (let i = 0; i < VARIED; i += 1) {
      // Each varied visitor is in the US first, then elsewhere (every third one much later).
      const later = i % 3 === 0 ? 5000 : 1;
      events.push(event(`varied-${i}`, at(i * 2), { country: 'US', device: i % 2 === 0 ? 'desktop' : 'mobile' }));
      events.push(event(`varied-${i}`, at(i * 2 + later), { country: 'FR', device: 'desktop', path: '/fr' }));
    }
    for (let i = 0; i < STEADY; i += 1) events.push(event(`steady-${i}`, at(i * 6 + 1), { country: i % 4 === 0 ? 'DE' : 'US', device: 'desktop' }));
    for (let i = 0; i < events.length; i += 300) await writeAndDerive(t, events.slice(i, i + 300));
    const store = sqlEventStore(t.db, settleRollups(t));
    for (const filters of [...ATTRIBUTE_FILTER_SETS.slice(0, 3), [{ dimension: 'device' as const, operator: 'is' as const, values: ['desktop'] }]]) {
      const scope: StatsScope = { websiteId: f.website.id, range: null, timezone: 'UTC', filters };
      for (const page of PAGES) {
        const fromTotals = await store.visitors(scope, {}, page);
        const fromEvents = await store.visitors({ ...scope, range: EVERYTHING }, {}, page);
        expect(fromTotals, JSON.stringify({ filters, page })).toEqual(fromEvents);
      }
    }
    // The US filter lists every varied visitor (first seen there) and the 112 steady Americans, besides the fixture's.
    const us = await store.visitors({ websiteId: f.website.id, range: null, timezone: 'UTC', filters: ATTRIBUTE_FILTER_SETS[0]! }, {}, { limit: 10, offset: 0 });
    expect(us.total).toBeGreaterThanOrEqual(VARIED + 112);
  });
});
