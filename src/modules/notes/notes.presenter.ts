import type { NoteWithAuthor } from './notes.repository.ts';
import type { NoteView } from './notes.schemas.ts';

export function presentNote(row: NoteWithAuthor): NoteView {
  return {
    id: row.id,
    _id: row.id,
    websiteId: row.website_id,
    text: row.text,
    timestamp: row.timestamp,
    author: row.author_id !== null && row.author_name !== null ? { id: row.author_id, name: row.author_name } : null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
