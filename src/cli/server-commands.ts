import type { Command } from 'commander';
import { ConfigError, loadConfig } from '../config.ts';

// The server, the database drivers and the migrations load only when a command needs them, so
// the client commands (and --help) start quickly.

export function fail(message: string, code = 1): never {
  process.stderr.write(`sightline: ${message}\n`);
  process.exit(code);
}

export function configOrFail() {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message, 2);
    throw error;
  }
}

export function registerServerCommands(program: Command): void {
  program
    .command('serve')
    .description('run the HTTP server (migrates the database first); listens on HOST:PORT')
    .action(async () => {
      try {
        const { startServer } = await import('../server.ts');
        await startServer(configOrFail());
      } catch (error) {
        fail(`could not start: ${(error as Error).message}`);
      }
    });

  program
    .command('migrate')
    .description('bring the database schema up to date and exit')
    .action(async () => {
      const { createDatabase } = await import('../db/database.ts');
      const { migrateToLatest } = await import('../db/migrate.ts');
      const db = createDatabase(configOrFail().databaseUrl);
      try {
        const applied = await migrateToLatest(db);
        process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'already up to date\n');
      } catch (error) {
        fail(`migration failed: ${(error as Error).message}`);
      } finally {
        await db.close();
      }
    });
}
