import { type Kysely, type Selectable, sql } from 'kysely';
import type { Database, NotesTable } from '../../db/schema.ts';
import type { NoteOrder } from './notes.schemas.ts';

export type NoteRow = Selectable<NotesTable>;
/** A note with its author's name (null when the account is gone). */
export type NoteWithAuthor = NoteRow & { author_name: string | null };

export interface NoteFilters {
  /** ISO UTC; from included, to excluded. */
  from?: string;
  to?: string;
  q?: string;
}

/** `q` as a LIKE pattern matching it anywhere, its own % _ and \ taken literally. */
const containsPattern = (q: string) => `%${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

function withFilters(db: Kysely<Database>, websiteId: string, filters: NoteFilters) {
  let query = db.selectFrom('notes').where('notes.website_id', '=', websiteId);
  if (filters.from !== undefined) query = query.where('notes.timestamp', '>=', filters.from);
  if (filters.to !== undefined) query = query.where('notes.timestamp', '<', filters.to);
  // Explicit ESCAPE: SQLite has no default escape character for LIKE.
  if (filters.q !== undefined) query = query.where(sql<boolean>`lower(notes.text) like ${containsPattern(filters.q)} escape '\\'`);
  return query;
}

const withAuthor = (db: Kysely<Database>) =>
  db.selectFrom('notes').leftJoin('accounts', 'accounts.id', 'notes.author_id').selectAll('notes').select('accounts.name as author_name');

/** A page of the website's notes by timestamp (then id, for a stable page), and how many match in all. */
export async function listNotes(
  db: Kysely<Database>,
  websiteId: string,
  filters: NoteFilters,
  page: { limit: number; offset: number; order: NoteOrder },
): Promise<{ rows: NoteWithAuthor[]; total: number }> {
  const rows = await withFilters(db, websiteId, filters)
    .leftJoin('accounts', 'accounts.id', 'notes.author_id')
    .selectAll('notes')
    .select('accounts.name as author_name')
    .orderBy('notes.timestamp', page.order)
    .orderBy('notes.id', page.order)
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  const count = await withFilters(db, websiteId, filters)
    .select((eb) => eb.fn.countAll().as('total'))
    .executeTakeFirstOrThrow();
  return { rows, total: Number(count.total) };
}

export async function findNote(db: Kysely<Database>, websiteId: string, noteId: string): Promise<NoteWithAuthor | undefined> {
  return withAuthor(db).where('notes.website_id', '=', websiteId).where('notes.id', '=', noteId).executeTakeFirst();
}

export async function findByIdempotencyKey(
  db: Kysely<Database>,
  websiteId: string,
  authorId: string,
  key: string,
): Promise<NoteWithAuthor | undefined> {
  return withAuthor(db)
    .where('notes.website_id', '=', websiteId)
    .where('notes.author_id', '=', authorId)
    .where('notes.idempotency_key', '=', key)
    .executeTakeFirst();
}

export async function insertNote(db: Kysely<Database>, row: NoteRow): Promise<void> {
  await db.insertInto('notes').values(row).execute();
}

export async function updateNote(
  db: Kysely<Database>,
  websiteId: string,
  noteId: string,
  changes: Partial<Pick<NoteRow, 'text' | 'timestamp'>> & { updated_at: string },
): Promise<boolean> {
  const result = await db.updateTable('notes').set(changes).where('website_id', '=', websiteId).where('id', '=', noteId).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function deleteNote(db: Kysely<Database>, websiteId: string, noteId: string): Promise<boolean> {
  const result = await db.deleteFrom('notes').where('website_id', '=', websiteId).where('id', '=', noteId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Whether an insert lost a race for an idempotency key: the unique index refused it, on either engine. */
export function isIdempotencyKeyViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, constraint, message } = error as { code?: unknown; constraint?: unknown; message?: unknown };
  if (code === '23505') return constraint === 'notes_idempotency_idx';
  return code === 'SQLITE_CONSTRAINT_UNIQUE' && typeof message === 'string' && message.includes('notes.idempotency_key');
}
