import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { DateTime } from 'luxon';
import type { Database } from '../../db/schema.ts';
import { conflict, invalidField, notFound } from '../../errors.ts';
import { normaliseTimezone } from '../../lib/formats.ts';
import { newId } from '../../lib/ids.ts';
import { DAY, INSTANT, parseRange } from '../goals/tracked-goals.range.ts';
import { presentPagination } from '../../http/schemas.ts';
import { TIMEZONE_RULE } from '../websites/website-settings.ts';
import { findWebsiteTimezone } from '../websites/websites.repository.ts';
import { presentNote } from './notes.presenter.ts';
import * as repo from './notes.repository.ts';
import {
  type CreateNoteInput,
  LIST_LIMIT_DEFAULT,
  type ListNotesQueryInput,
  type NoteView,
  type UpdateNoteInput,
} from './notes.schemas.ts';

// Notes are the website's: any role reads them, owners and members (and the website's df_ key)
// write them, whoever wrote them. The author is the account of the credential (for a df_ key,
// the website's owner, as GET /account answers for it).
//
// Time zones: a timestamp sent as a day means noon of that day in the website's time zone (noon
// exists on every day, daylight-saving ones too, and stays on that day in any zone within 12
// hours). The list's `timezone` only changes how startAt/endAt days are read; timestamps are
// always answered in UTC, as every instant of the API is.

const EARLIEST = Date.UTC(1970, 0, 1);
const LATEST = Date.UTC(10000, 0, 1);
const TIMESTAMP_RULE = "must be an ISO-8601 instant with a time zone, or a YYYY-MM-DD day (noon in the website's time zone)";
const NOON = { hour: 12, minute: 0, second: 0, millisecond: 0 };

function textOf(text: string): string {
  if (text.trim() === '') throw invalidField('body.text', 'must not be only white space');
  return text;
}

/**
 * The instant as ISO UTC with milliseconds, within the years both engines store; a day is noon
 * of that day in the website's time zone (read only then).
 */
async function timestampOf(db: Kysely<Database>, websiteId: string, value: string): Promise<string> {
  let at: DateTime;
  if (DAY.test(value)) at = DateTime.fromISO(value, { zone: await websiteTimezone(db, websiteId) }).set(NOON);
  else if (INSTANT.test(value)) at = DateTime.fromISO(value.replace(' ', 'T'), { setZone: true });
  else throw invalidField('body.timestamp', TIMESTAMP_RULE);
  if (!at.isValid) throw invalidField('body.timestamp', TIMESTAMP_RULE);
  const millis = at.toMillis();
  if (millis < EARLIEST || millis >= LATEST) throw invalidField('body.timestamp', 'must be an instant between 1970 and 9999');
  return new Date(millis).toISOString();
}

async function websiteTimezone(db: Kysely<Database>, websiteId: string): Promise<string> {
  const timezone = await findWebsiteTimezone(db, websiteId);
  if (timezone === undefined) throw notFound('Website not found');
  return timezone;
}

/** `timezone`, when sent, as its canonical IANA name (checked even when no day needs it). */
function askedTimezone(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const timezone = normaliseTimezone(raw);
  if (timezone === null) throw invalidField('query.timezone', TIMEZONE_RULE);
  return timezone;
}

export async function listNotes(db: Kysely<Database>, websiteId: string, query: ListNotesQueryInput) {
  const limit = query.limit ?? LIST_LIMIT_DEFAULT;
  const offset = query.offset ?? 0;
  const order = query.order ?? 'desc';
  const timezone = askedTimezone(query.timezone);
  const filters: repo.NoteFilters = { q: query.q };
  if (query.startAt !== undefined || query.endAt !== undefined) {
    const range = parseRange(query, timezone ?? (await websiteTimezone(db, websiteId)))!;
    filters.from = range.from;
    filters.to = range.to;
  }
  const { rows, total } = await repo.listNotes(db, websiteId, filters, { limit, offset, order });
  return { data: rows.map(presentNote), pagination: presentPagination({ limit, offset }, total) };
}

/** What a replay must repeat: the note's content as sent (no timestamp sent is part of it). */
function digestOf(text: string, timestamp: string | null): string {
  return createHash('sha256').update(JSON.stringify({ text, timestamp })).digest('hex');
}

function replayed(existing: repo.NoteWithAuthor, digest: string): NoteView {
  if (existing.request_digest !== digest) {
    throw conflict('idempotencyKey was already used for a different note; send a new key for new content');
  }
  return presentNote(existing);
}

/**
 * Creates a note dated `timestamp` (default now). With an idempotencyKey, a request repeated
 * with the same content answers the note the first one created (as it is now); the same key
 * with other content is a 409. Keys are per author and website.
 */
export async function createNote(db: Kysely<Database>, websiteId: string, authorId: string, input: CreateNoteInput): Promise<NoteView> {
  const text = textOf(input.text);
  const sentTimestamp = input.timestamp === undefined ? null : await timestampOf(db, websiteId, input.timestamp);
  const key = input.idempotencyKey;
  const digest = key === undefined ? null : digestOf(text, sentTimestamp);
  if (key !== undefined) {
    const existing = await repo.findByIdempotencyKey(db, websiteId, authorId, key);
    if (existing) return replayed(existing, digest!);
  }
  const now = new Date().toISOString();
  const row: repo.NoteRow = {
    id: newId(),
    website_id: websiteId,
    author_id: authorId,
    text,
    timestamp: sentTimestamp ?? now,
    idempotency_key: key ?? null,
    request_digest: digest,
    created_at: now,
    updated_at: now,
  };
  try {
    await repo.insertNote(db, row);
  } catch (error) {
    // A concurrent request with the same key won: answer as its replay.
    if (key === undefined || !repo.isIdempotencyKeyViolation(error)) throw error;
    const winner = await repo.findByIdempotencyKey(db, websiteId, authorId, key);
    if (!winner) throw error;
    return replayed(winner, digest!);
  }
  const created = await repo.findNote(db, websiteId, row.id);
  return presentNote(created!);
}

/** Partial: only text and timestamp sent change. */
export async function updateNote(db: Kysely<Database>, websiteId: string, noteId: string, input: UpdateNoteInput): Promise<NoteView> {
  const changes: Parameters<typeof repo.updateNote>[3] = { updated_at: new Date().toISOString() };
  if (input.text !== undefined) changes.text = textOf(input.text);
  if (input.timestamp !== undefined) changes.timestamp = await timestampOf(db, websiteId, input.timestamp);
  if (!(await repo.updateNote(db, websiteId, noteId, changes))) throw notFound('Note not found');
  return presentNote((await repo.findNote(db, websiteId, noteId))!);
}

export async function deleteNote(db: Kysely<Database>, websiteId: string, noteId: string) {
  if (!(await repo.deleteNote(db, websiteId, noteId))) throw notFound('Note not found');
  return { message: 'Note deleted' };
}
