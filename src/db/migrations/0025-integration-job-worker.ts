import type { Kysely } from 'kysely';
import type { Engine } from '../database.ts';
import { columnTypes } from './column-types.ts';

/**
 * Integration jobs get run (issue 34): a job is leased to one worker at a time (`lease_owner`
 * until `locked_until`, so a crashed instance's job is taken again once its lease ends), retried
 * after `run_after`, and its history import resumes from `cursor` (pages and payments done so
 * far are its progress). An integration remembers what the provider answered when its credential
 * was checked: the account's name and currency, or the error.
 */
export function integrationJobWorker(engine: Engine) {
  const { timestamp } = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const jobs = db.schema.alterTable('integration_jobs');
      await jobs.addColumn('lease_owner', 'text').execute();
      await jobs.addColumn('locked_until', timestamp).execute();
      await jobs.addColumn('run_after', timestamp).execute();
      await jobs.addColumn('cursor', 'text').execute();
      await jobs.addColumn('pages_done', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await jobs.addColumn('payments_imported', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      const integrations = db.schema.alterTable('integrations');
      await integrations.addColumn('account_name', 'text').execute();
      await integrations.addColumn('account_currency', 'text').execute();
      await integrations.addColumn('verified_at', timestamp).execute();
      await integrations.addColumn('verification_error', 'text').execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      for (const column of ['verification_error', 'verified_at', 'account_currency', 'account_name']) {
        await db.schema.alterTable('integrations').dropColumn(column).execute();
      }
      for (const column of ['payments_imported', 'pages_done', 'cursor', 'run_after', 'locked_until', 'lease_owner']) {
        await db.schema.alterTable('integration_jobs').dropColumn(column).execute();
      }
    },
  };
}
