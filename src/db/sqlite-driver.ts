import SQLite from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';
import { createPrivateFile } from '../lib/private-file.ts';

// better-sqlite3 as Kysely sees it, with two adjustments at the driver edge:
// booleans bind as 1/0 (better-sqlite3 refuses them), and prepared statements (with the
// wrapper Kysely calls) are reused per SQL text, which saves a parse on every request.

const STATEMENT_CACHE_SIZE = 500;

function bindable(parameters: readonly unknown[]): readonly unknown[] {
  if (!parameters.some((value) => typeof value === 'boolean')) return parameters;
  return parameters.map((value) => (typeof value === 'boolean' ? (value ? 1 : 0) : value));
}

/**
 * Creates the database file readable by its owner only, before SQLite opens it: the events hold
 * visitors' data and the tables hold credential digests. SQLite gives the -wal and -shm files it
 * creates the mode of the database file, so they follow. An existing file keeps its mode.
 */
function createDatabaseFile(path: string): void {
  if (path === ':memory:' || path === '') return;
  try {
    createPrivateFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

export function openSqlite(path: string): { database: SqliteDatabase; raw: SQLite.Database } {
  createDatabaseFile(path);
  const raw = new SQLite(path);
  // Durability first: an acknowledged write survives a crash or power loss.
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = FULL');
  raw.pragma('foreign_keys = ON');
  raw.pragma('busy_timeout = 5000');

  const statements = new Map<string, SqliteStatement>();
  const wrap = (statement: SQLite.Statement): SqliteStatement => ({
    reader: statement.reader,
    all: (parameters) => statement.all(...bindable(parameters)),
    run: (parameters) => {
      const result = statement.run(...bindable(parameters));
      return { changes: result.changes, lastInsertRowid: result.lastInsertRowid };
    },
    iterate: (parameters) => statement.iterate(...bindable(parameters)),
  });

  const prepare = (sql: string): SqliteStatement => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = wrap(raw.prepare(sql));
      if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value!);
      statements.set(sql, statement);
    }
    return statement;
  };
  const database: SqliteDatabase = { close: () => raw.close(), prepare };
  return { database, raw };
}
