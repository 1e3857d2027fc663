import type { Command } from 'commander';
import { databaseProblem, openMigratedDatabase } from './database-access.ts';
import { fail, messageOf } from './failure.ts';
import { serverSettingsOrFail } from './settings.ts';

// The server, the database drivers and the migrations load only when a command needs them, so
// the client commands (and --help) start quickly. Both commands check every setting before they
// touch the database, and report a failure in one line.

export function registerServerCommands(program: Command): void {
  program
    .command('serve')
    .description('run the HTTP server (migrates the database first); listens on HOST:PORT')
    .action(async () => {
      const config = serverSettingsOrFail();
      try {
        const { startServer } = await import('../server.ts');
        await startServer(config);
      } catch (error) {
        fail(`could not start: ${messageOf(error)}`);
      }
    });

  program
    .command('migrate')
    .description('bring the database schema up to date and exit')
    .action(async () => {
      const config = serverSettingsOrFail();
      const { createDatabase } = await import('../db/database.ts');
      const { migrateToLatest } = await import('../db/migrate.ts');
      let db: Awaited<ReturnType<typeof openMigratedDatabase>> | undefined;
      try {
        db = createDatabase(config.databaseUrl);
        const applied = await migrateToLatest(db);
        process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'already up to date\n');
      } catch (error) {
        fail(`migration failed: ${databaseProblem(config, error)}`);
      } finally {
        await db?.close().catch(() => {});
      }
    });
}
