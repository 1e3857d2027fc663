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

/**
 * `flushedByCaller`: commits do not wait for the flush of the write-ahead log, because whoever
 * commits flushes it off the event loop before answering (src/db/sqlite-durability.ts).
 * Otherwise every commit flushes it itself (`synchronous = FULL`).
 */
export function openSqlite(
  path: string,
  options: { flushedByCaller?: boolean; onWrite?: () => void } = {},
): { database: SqliteDatabase; raw: SQLite.Database } {
  createDatabaseFile(path);
  const raw = new SQLite(path);
  // Durability first: an acknowledged write survives a crash or power loss.
  raw.pragma('journal_mode = WAL');
  raw.pragma(options.flushedByCaller ? 'synchronous = NORMAL' : 'synchronous = FULL');
  raw.pragma('foreign_keys = ON');
  // The deriver's temporary tables (a batch's keys) live in memory, not in a file written at each
  // of its statements: a build's chunk of events took twice as long with them on disk.
  raw.pragma('temp_store = MEMORY');
  raw.pragma('busy_timeout = 5000');

  const statements = new Map<string, SqliteStatement>();
  const noteWrite = options.onWrite ?? (() => {});
  const wrap = (statement: SQLite.Statement): SqliteStatement & { readonly: boolean } => {
    // Called before the statement runs: a write that fails half-way may still have written.
    const writes = statement.readonly ? () => {} : noteWrite;
    return {
      reader: statement.reader,
      // Read by the write gate (sqlite-write-gate.ts): whether the statement may write.
      readonly: statement.readonly,
      all: (parameters) => {
        writes();
        return statement.all(...bindable(parameters));
      },
      run: (parameters) => {
        writes();
        const result = statement.run(...bindable(parameters));
        return { changes: result.changes, lastInsertRowid: result.lastInsertRowid };
      },
      iterate: (parameters) => {
        writes();
        return statement.iterate(...bindable(parameters));
      },
    };
  };

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
