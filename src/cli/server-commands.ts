import type { Command } from 'commander';
import { ConfigError, loadConfig } from '../config.ts';
import { createDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { startServer } from '../server.ts';

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
        await startServer(configOrFail());
      } catch (error) {
        fail(`could not start: ${(error as Error).message}`);
      }
    });

  program
    .command('migrate')
    .description('bring the database schema up to date and exit')
    .action(async () => {
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
