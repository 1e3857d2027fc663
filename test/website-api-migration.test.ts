import type { Kysely } from 'kysely';
import { expect, it } from 'vitest';
import { websiteApi } from '../src/db/migrations/0007-website-api.ts';
import { rebuildBreakdownRollups } from '../src/modules/analytics/breakdown-rollups.ts';
import { MARCH, analyticsFixture } from './helpers/analytics-fixture.ts';
import { useTestApp } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';

// Migration 0007 on events stored before it: their sessions are rebuilt from them, and they stay
// readable (unknown in the new dimensions).

describeEachEngine('website API migration', (engine) => {
  const t = useTestApp(engine);

  it('0007 rebuilds the sessions of stored events and keeps them readable', async () => {
    const f = await analyticsFixture(t);
    const kept = ['session_id', 'visitor_id', 'pageviews', 'events', 'goals', 'entry_hostname', 'entry_path', 'exit_path'] as const;
    const before = await t.db.selectFrom('sessions').select(kept).where('website_id', '=', f.website.id).orderBy('session_id').execute();
    expect(before).toHaveLength(4);

    // Back to the schema before 0007 (the new columns and tables gone), then forward again.
    const migration = websiteApi(engine);
    const untyped = t.db as unknown as Kysely<unknown>;
    await migration.down(untyped);
    await migration.up(untyped);
    // On a real upgrade the later migrations derive the breakdown rollups from these sessions.
    await t.db.transaction().execute((trx) => rebuildBreakdownRollups(trx, f.website.id));

    const after = await t.db.selectFrom('sessions').select(kept).where('website_id', '=', f.website.id).orderBy('session_id').execute();
    expect(after).toEqual(before);
    const overview = await t.request('GET', '/api/v1/analytics/overview', { token: f.owner.token, query: { websiteId: f.website.id, ...MARCH } });
    expect(overview.status, overview.raw).toBe(200);
    expect(overview.body.data[0]).toMatchObject({ visitors: 3, sessions: 4, pageviews: 6, bounce_rate: 50 });
    const referrers = await t.request('GET', '/api/v1/analytics/referrers', { token: f.owner.token, query: { websiteId: f.website.id, ...MARCH } });
    expect(referrers.body.data).toEqual([{ referrer: null, visitors: 3, pageviews: 6, revenue: 49 }]);
  });
});
