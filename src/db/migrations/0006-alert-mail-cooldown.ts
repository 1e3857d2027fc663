import type { Kysely } from 'kysely';
import type { Engine } from '../database.ts';
import type { Database } from '../schema.ts';
import { columnTypes } from './column-types.ts';

/**
 * `alerts.last_triggered_at` held the time of the last queued e-mail (the cooldown's reference),
 * so it stood still while firings were throttled or skipped. The contract makes it the latest
 * firing, so the cooldown gets its own column, `last_mailed_at`, which takes over the old values,
 * and `last_triggered_at` becomes the time of the alert's newest history row.
 */
export function alertMailCooldown(engine: Engine) {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('alerts').addColumn('last_mailed_at', t.timestamp).execute();
      const typed = db as Kysely<Database>;
      await typed.updateTable('alerts').set((eb) => ({ last_mailed_at: eb.ref('last_triggered_at') })).execute();
      await typed
        .updateTable('alerts')
        .set((eb) => ({
          last_triggered_at: eb
            .selectFrom('alert_history')
            .select((h) => h.fn.max('alert_history.triggered_at').as('latest'))
            .whereRef('alert_history.alert_id', '=', 'alerts.id'),
        }))
        .where((eb) => eb.exists(eb.selectFrom('alert_history').select('alert_history.id').whereRef('alert_history.alert_id', '=', 'alerts.id')))
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      const typed = db as Kysely<Database>;
      await typed.updateTable('alerts').set((eb) => ({ last_triggered_at: eb.ref('last_mailed_at') })).execute();
      await db.schema.alterTable('alerts').dropColumn('last_mailed_at').execute();
    },
  };
}
