import { type Static, Type } from 'typebox';
import { Id, Nullable, Pagination, Timestamp } from '../../http/schemas.ts';

// Notes: annotations on a website's charts (website-api.md sections 4 and 7).

export const NOTE_TEXT_MAX = 500;
export const LIST_LIMIT_DEFAULT = 100;
export const LIST_LIMIT_MAX = 1000;

const NoteText = Type.String({ minLength: 1, maxLength: NOTE_TEXT_MAX, description: `1-${NOTE_TEXT_MAX} characters, not only white space` });
// Checked by the service (a day is read in the website's time zone), so the message names the rule.
const NoteTimestamp = Type.String({
  minLength: 1,
  maxLength: 40,
  description:
    "the moment the note is about: an ISO-8601 instant with a zone, or a YYYY-MM-DD day (noon of that day in the website's " +
    'time zone); answered as an ISO-8601 instant in UTC',
  examples: ['2026-03-10T09:00:00.000Z', '2026-03-10'],
});

export const Note = Type.Object({
  id: Id,
  _id: Id,
  websiteId: Id,
  text: Type.String(),
  timestamp: Timestamp,
  author: Nullable(Type.Object({ id: Id, name: Type.String() }, { description: 'the account that wrote it; null once that account is gone' })),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type NoteView = Static<typeof Note>;

export const NoteParams = Type.Object({ websiteId: Id, noteId: Id }, { additionalProperties: false });

export const CreateNoteBody = Type.Object(
  {
    text: NoteText,
    timestamp: Type.Optional(NoteTimestamp),
    idempotencyKey: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        pattern: '^[\\x20-\\x7e]+$',
        description: 'printable ASCII; sending the same key with the same note again answers that note instead of a second one',
      }),
    ),
  },
  { additionalProperties: false, examples: [{ text: 'Launched the new pricing page', timestamp: '2026-03-10T09:00:00.000Z' }] },
);
export type CreateNoteInput = Static<typeof CreateNoteBody>;

export const UpdateNoteBody = Type.Object(
  { text: Type.Optional(NoteText), timestamp: Type.Optional(NoteTimestamp) },
  { additionalProperties: false, minProperties: 1, examples: [{ text: 'Launched the new pricing page (all regions)' }] },
);
export type UpdateNoteInput = Static<typeof UpdateNoteBody>;

const rangeBound = 'a YYYY-MM-DD day in the time zone (the whole day counts) or an ISO-8601 instant with a zone';

export const NOTE_ORDERS = ['desc', 'asc'] as const;
export type NoteOrder = (typeof NOTE_ORDERS)[number];

export const ListNotesQuery = Type.Object(
  {
    startAt: Type.Optional(Type.String({ maxLength: 40, description: `notes from: ${rangeBound}; with endAt`, examples: ['2026-03-01'] })),
    endAt: Type.Optional(Type.String({ maxLength: 40, description: `notes to, included: ${rangeBound}; with startAt`, examples: ['2026-03-31'] })),
    timezone: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: "an IANA time zone in which startAt and endAt days are read; default the website's (timestamps stay UTC)",
        examples: ['America/New_York'],
      }),
    ),
    order: Type.Optional(
      Type.Enum([...NOTE_ORDERS], { default: 'desc', description: 'by timestamp: desc (newest first, the default) or asc (oldest first)' }),
    ),
    q: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\u0000]*$', description: 'only notes whose text contains this, ignoring case' }),
    ),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: LIST_LIMIT_MAX, default: LIST_LIMIT_DEFAULT, description: `notes per page, at most ${LIST_LIMIT_MAX}` }),
    ),
    offset: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'notes to skip' })),
  },
  { additionalProperties: false },
);
export type ListNotesQueryInput = Static<typeof ListNotesQuery>;

export const NotesPagination = Pagination('notes matching the filters, before limit and offset');
