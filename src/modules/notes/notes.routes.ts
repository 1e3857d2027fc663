import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { EmptyBody, Envelope, ErrorEnvelope, Message, WebsiteParams, ok, withErrors } from '../../http/schemas.ts';
import { principalOf, websiteOf } from '../../http/request-context.ts';
import { CreateNoteBody, ListNotesQuery, Note, NoteParams, NotesPagination, UpdateNoteBody } from './notes.schemas.ts';
import * as service from './notes.service.ts';

// Notes are grouped with the website in the document (they annotate its charts).
const tags = ['Notes'];

export const notesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.db.kysely;

  app.get('/websites/:websiteId/notes', {
    config: { access: { scope: 'website', permission: 'notes:read', action: 'read', apiKey: true } },
    schema: {
      tags,
      summary: "List the website's notes by timestamp, newest first unless order=asc",
      description:
        'startAt and endAt (both or neither; YYYY-MM-DD days, both included, or ISO-8601 instants) filter on the note ' +
        "timestamp; days are read in timezone when sent, else in the website's. timezone changes nothing else: timestamps " +
        'are answered in UTC. q keeps notes whose text contains it, ignoring case.',
      params: WebsiteParams,
      querystring: ListNotesQuery,
      response: withErrors({ 200: Envelope(Note, { pagination: NotesPagination }) }),
    },
    handler: async (request) => {
      const { data, pagination } = await service.listNotes(db, websiteOf(request).websiteId, request.query);
      return { ...ok(data), pagination };
    },
  });

  app.post('/websites/:websiteId/notes', {
    config: { access: { scope: 'website', permission: 'notes:write', action: 'manage', apiKey: true } },
    schema: {
      tags,
      summary:
        "Add a note to the website (timestamp defaults to now; a YYYY-MM-DD day means noon in the website's time zone; " +
        'an idempotencyKey makes a retry answer the same note)',
      params: WebsiteParams,
      body: CreateNoteBody,
      response: withErrors({ 200: Envelope(Note), 409: ErrorEnvelope }),
    },
    handler: async (request) =>
      ok([await service.createNote(db, websiteOf(request).websiteId, principalOf(request).accountId, request.body)]),
  });

  app.put('/websites/:websiteId/notes/:noteId', {
    config: { access: { scope: 'website', permission: 'notes:write', action: 'manage', apiKey: true } },
    schema: {
      tags,
      summary: 'Change a note (only the fields sent change)',
      params: NoteParams,
      body: UpdateNoteBody,
      response: withErrors({ 200: Envelope(Note) }),
    },
    handler: async (request) => ok([await service.updateNote(db, websiteOf(request).websiteId, request.params.noteId, request.body)]),
  });

  app.delete('/websites/:websiteId/notes/:noteId', {
    config: { access: { scope: 'website', permission: 'notes:write', action: 'manage', apiKey: true } },
    schema: { tags, summary: 'Delete a note', params: NoteParams, body: EmptyBody, response: withErrors({ 200: Envelope(Message) }) },
    handler: async (request) => ok([await service.deleteNote(db, websiteOf(request).websiteId, request.params.noteId)]),
  });
};
