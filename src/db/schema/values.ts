import type { ColumnType } from 'kysely';

// Column value types shared by both engines. Times are ISO-8601 strings on both (text on SQLite,
// timestamptz parsed back to ISO on PostgreSQL); booleans are 0/1 on SQLite and true/false on
// PostgreSQL when read, so mappers pass them through Boolean(). JSON arrays are stored as text.

export type Bool = ColumnType<boolean | number, boolean, boolean>;
export type JsonText = string;
