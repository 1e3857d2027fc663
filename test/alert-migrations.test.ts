import type { Kysely } from 'kysely';
import { expect, it } from 'vitest';
import { alertMailCooldown } from '../src/db/migrations/0006-alert-mail-cooldown.ts';
import { newId } from '../src/lib/ids.ts';
import { useTestApp } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { createAccount, createWebsite } from './helpers/factories.ts';

// Migration 0006 on data written under the old rule, where alerts.last_triggered_at was the time
// of the last queued e-mail (the cooldown's reference) and stood still on throttled firings.

describeEachEngine('alert migrations', (engine) => {
  const t = useTestApp(engine);

  it('0006 keeps the cooldown in last_mailed_at and makes lastTriggeredAt the newest history row', async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const body = { name: 'Signups', trigger: { goalName: 'signup' }, template: { message: 'Someone signed up.' } };
    const fired = (await t.request('POST', `/api/v1/admin/websites/${website.id}/alerts`, { token: owner.token, body })).body.data[0];
    const silent = (await t.request('POST', `/api/v1/admin/websites/${website.id}/alerts`, { token: owner.token, body })).body.data[0];
    const mailedAt = '2026-05-21T12:00:00.000Z';
    const history = (status: string, triggeredAt: string) => ({
      id: newId(),
      website_id: website.id,
      alert_id: fired.id,
      alert_name: 'Signups',
      goal_name: 'signup',
      status,
      error: null,
      visitor_id: 'v',
      triggered_at: triggeredAt,
    });
    await t.db.insertInto('alert_history').values([history('sent', mailedAt), history('throttled', '2026-05-21T12:00:30.000Z')]).execute();
    await t.db.updateTable('alerts').set({ last_mailed_at: mailedAt }).where('id', '=', fired.id).execute();

    // Back to the old schema (last_triggered_at = the last e-mail), then forward again.
    const migration = alertMailCooldown(engine);
    const untyped = t.db as unknown as Kysely<unknown>;
    await migration.down(untyped);
    await migration.up(untyped);

    const rows = await t.db.selectFrom('alerts').select(['id', 'last_triggered_at', 'last_mailed_at']).where('website_id', '=', website.id).execute();
    const byId = new Map(rows.map((row) => [row.id, row]));
    expect(new Date(byId.get(fired.id)!.last_mailed_at!).toISOString()).toBe(mailedAt);
    expect(byId.get(silent.id)).toMatchObject({ last_triggered_at: null, last_mailed_at: null });
    const listed = await t.request('GET', `/api/v1/admin/websites/${website.id}/alerts`, { token: owner.token });
    expect(listed.body.data.find((a: { id: string }) => a.id === fired.id).lastTriggeredAt).toBe('2026-05-21T12:00:30.000Z');
  });
});
