import { resolve } from 'node:path';

// What DATABASE_URL names, read without loading a database driver (the CLI's client commands and
// the settings check use it too): one home for its rules.

export type DatabaseUrlKind = 'sqlite' | 'postgres';

/** Which engine the URL names; throws a sentence naming DATABASE_URL when it names none. */
export function databaseUrlKind(url: string): DatabaseUrlKind {
  if (url.startsWith('sqlite:')) return 'sqlite';
  if (/^postgres(ql)?:\/\//.test(url)) {
    try {
      new URL(url);
    } catch {
      throw new Error('DATABASE_URL is not a valid postgres:// URL');
    }
    return 'postgres';
  }
  throw new Error(`DATABASE_URL must start with sqlite: or postgres://, got "${url.split(':')[0]}:..."`);
}

/** The SQLite path named by the URL (absolute, or `:memory:`), or null for another engine. */
export function sqlitePathFromUrl(url: string): string | null {
  if (!url.startsWith('sqlite:')) return null;
  const path = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
  return path === ':memory:' ? path : resolve(path);
}

/** The SQLite file named by the URL, or null (PostgreSQL, or an in-memory database). */
export function sqliteFileFromUrl(url: string): string | null {
  const path = sqlitePathFromUrl(url);
  return path === ':memory:' ? null : path;
}
