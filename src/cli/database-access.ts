import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import { fail, messageOf } from './failure.ts';

// How the commands that use the database directly open it, and how they say in one line (never a
// stack trace, never the password in DATABASE_URL) why they could not.

/** DATABASE_URL as it may be shown: a PostgreSQL password becomes ***. */
export function redactDatabaseUrl(url: string): string {
  if (!/^postgres(ql)?:/.test(url)) return url;
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return `${url.split(':')[0]}://...`;
  }
}


/** The message for a database that cannot be opened or migrated. */
export function databaseProblem(config: Config, error: unknown): string {
  return `cannot use the database at ${redactDatabaseUrl(config.databaseUrl)}: ${messageOf(error)}`;
}

/**
 * Opens the configured database and brings its schema up to date, as the server does at start;
 * any failure ends the process with one line on stderr and exit 1.
 */
export async function openMigratedDatabase(config: Config): Promise<Db> {
  const { createDatabase } = await import('../db/database.ts');
  const { migrateToLatest } = await import('../db/migrate.ts');
  let db: Db | undefined;
  try {
    db = createDatabase(config.databaseUrl);
    await migrateToLatest(db);
    return db;
  } catch (error) {
    await db?.close().catch(() => {});
    fail(databaseProblem(config, error));
  }
}
