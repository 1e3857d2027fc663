import { type Static, Type } from 'typebox';
import { Id, Nullable, NullableTimestamp, Timestamp } from '../../http/schemas.ts';

// Imports of another tool's history (issue 37 item 1): Plausible's CSV export.

export const IMPORT_STATUSES = ['queued', 'running', 'done', 'failed'] as const;

const Day = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: "a local day of the website's time zone" });
const SKIP_REASONS =
  'native_day (the website has its own events that day), invalid_date, invalid_number, too_long (a key over 2048 characters); ' +
  'for sightline-export: already_present (the website holds the row already), invalid_record, unknown_type, settings_kept (the website record of a website with data of its own)';

export const ImportView = Type.Object({
  id: Id,
  websiteId: Id,
  source: Type.Enum(['plausible-csv', 'umami', 'sightline-export'], {
    description: "plausible-csv: a zip of Plausible's CSV export; umami: an Umami database read directly; sightline-export: Sightline's own raw export (docs/export-format.md)",
  }),
  label: Type.String(),
  status: Type.Enum([...IMPORT_STATUSES], { description: 'queued, running, done (merged into the reads), failed (see error; its rows are never read, except a sightline-export\'s, which stay until the import is deleted)' }),
  firstDay: Nullable(Day),
  lastDay: Nullable(Day),
  progress: Type.Object({
    filesTotal: Type.Integer(),
    filesDone: Type.Integer(),
    rowsRead: Type.Integer(),
    rowsKept: Type.Integer(),
    rowsSkipped: Type.Integer(),
    daysTotal: Type.Integer({ description: 'an Umami import: the local days of Umami data to read (0 otherwise)' }),
    daysDone: Type.Integer({ description: 'an Umami import: the days read so far' }),
    rowsTotal: Type.Optional(Type.Integer({ description: "sightline-export: the record lines the file holds (the whole the progress is read against)" })),
    percent: Type.Integer({ minimum: 0, maximum: 100, description: 'a zip: files done out of the files to read; Umami: days read out of the days to read; sightline-export: record lines read out of rowsTotal' }),
  }),
  report: Type.Object({
    files: Type.Array(
      Type.Object({ name: Type.String(), table: Type.String(), rowsRead: Type.Integer(), rowsKept: Type.Integer(), rowsSkipped: Type.Integer() }),
    ),
    ignoredFiles: Type.Array(Type.String(), { description: 'entries of the zip that are not one of the export tables: not read' }),
    skipped: Type.Record(Type.String(), Type.Integer(), { description: `rows skipped by reason: ${SKIP_REASONS}` }),
    nativeDays: Type.Array(Day, { description: 'days left out because the website has its own events on them' }),
    source: Type.Optional(
      Type.Object(
        {
          kind: Type.Literal('umami'),
          database: Type.String({ description: 'host:port/database read (never the credential)' }),
          websiteId: Type.String({ description: "the Umami website's id" }),
          websiteName: Type.String(),
          eventsRead: Type.Integer({ description: "Umami's page views and custom events read so far" }),
        },
        { description: 'an Umami import: what was read, from where' },
      ),
    ),
    export: Type.Optional(
      Type.Object(
        {
          websiteId: Nullable(Type.String()),
          domain: Nullable(Type.String()),
          exportedAt: Nullable(Type.String()),
          settings: Nullable(Type.Enum(['applied', 'kept'])),
        },
        {
          description:
            "sightline-export: what the export says of itself, and whether the website took its settings (applied: it had no data; kept: its own stay; null: not read yet)",
        },
      ),
    ),
  }),
  error: Nullable(Type.String()),
  uploadBytes: Type.Integer(),
  createdBy: Nullable(Id),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  finishedAt: NullableTimestamp,
});
export type ImportViewType = Static<typeof ImportView>;

export const ImportParams = Type.Object({ websiteId: Id, importId: Id }, { additionalProperties: false });

export const CreateImportQuery = Type.Object(
  {
    label: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'a name for the import; default: the days it covers' })),
  },
  { additionalProperties: false },
);

export const ZipBody = Type.Unknown({
  description: "Plausible's CSV export: the zip of imported_*.csv files, sent as the raw application/zip body",
});

export const SightlineExportBody = Type.Unknown({
  description: "Sightline's own raw export (GET /api/v1/export/raw): the NDJSON file as application/x-ndjson, or its gzip as application/gzip",
});

/** The same upload as JSON, for clients that cannot send bytes (the MCP tool). */
export const JsonImportBody = Type.Object(
  {
    zipBase64: Type.String({
      minLength: 1,
      pattern: '^[A-Za-z0-9+/\\r\\n]+={0,2}\\s*$',
      description: "the zip Plausible exports (imported_*.csv files), or Sightline's own raw export (NDJSON or its gzip), base64-encoded",
      // One day of imported_visitors, so Swagger UI's try-out imports something real.
      examples: [
        'UEsDBBQAAAAIAFwYg11LC0C/RQAAAFAAAAAnAAAAaW1wb3J0ZWRfdmlzaXRvcnNfMjAyMDAxMDFfMjAyMDAxMDEuY3N2LclBCsAgDAXRvWf5hZgeqNgaSjZaTLTXr1DhwSwmJxcMNfXaDE+6Zai8hrP2con9a+XIvSXXWgIT00ZxQiQwYUfkicIHUEsBAhQAFAAAAAgAXBiDXUsLQL9FAAAAUAAAACcAAAAAAAAAAAAAAAAAAAAAAGltcG9ydGVkX3Zpc2l0b3JzXzIwMjAwMTAxXzIwMjAwMTAxLmNzdlBLBQYAAAAAAQABAFUAAACKAAAAAAA=',
      ],
    }),
  },
  { additionalProperties: false },
);

const DatabaseUrl = Type.String({
  minLength: 1,
  maxLength: 2048,
  description:
    "the Umami database's PostgreSQL URL, postgres://user:password@host:5432/umami (?sslmode=require accepted); the host must be one the operator allows (IMPORT_UMAMI_HOSTS). Stored encrypted until the import ends, never returned",
  examples: ['postgres://umami:secret@127.0.0.1:5432/umami'],
});

export const UmamiConnectionBody = Type.Object({ databaseUrl: DatabaseUrl }, { additionalProperties: false });

export const CreateUmamiImportBody = Type.Object(
  {
    databaseUrl: DatabaseUrl,
    umamiWebsiteId: Type.String({
      pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
      description: "the Umami website to import (its id, a UUID: listUmamiWebsites lists them)",
      examples: ['9d4c3e2a-1b2c-4d5e-8f90-123456789abc'],
    }),
    label: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'a name for the import; default: the Umami website and the days it covers' })),
  },
  { additionalProperties: false },
);

export const UmamiWebsiteView = Type.Object({
  id: Type.String({ description: "the Umami website's id" }),
  name: Type.String(),
  domain: Nullable(Type.String()),
  events: Type.Integer({ description: 'page views and custom events Umami holds for it, counted up to 1,000,000' }),
  firstEventAt: NullableTimestamp,
  lastEventAt: NullableTimestamp,
});

export const ImportDeleted = Type.Object({ message: Type.String(), id: Id });
