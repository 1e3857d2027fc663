import type { Kysely, Selectable } from 'kysely';
import type { Database, ImportsTable } from '../../db/schema.ts';
import { newJob } from '../integrations/job-queue.ts';
import type { JobRow } from '../integrations/integrations.repository.ts';
import { PLAUSIBLE_TABLES } from './plausible-csv.ts';

export type ImportRow = Selectable<ImportsTable>;

/** The integration_jobs kinds an import runs as (job-queue.ts leases them like any other job). */
export const IMPORT_JOB = 'import';
export const IMPORT_DELETE_JOB = 'import-delete';
export const IMPORT_PROVIDER = 'plausible-csv';
/** imports.source of a zip of Plausible's CSV export, and of an Umami database read directly. */
export const PLAUSIBLE_SOURCE = 'plausible-csv';
export const UMAMI_SOURCE = 'umami';
/** Sightline's own raw export (sightline-import-job.ts): its source, and the kinds of its jobs. */
export const SIGHTLINE_SOURCE = 'sightline-export';
export const SIGHTLINE_IMPORT_JOB = 'import-sightline';
export const SIGHTLINE_DELETE_JOB = 'import-sightline-delete';

/** Statuses whose import still stands: a new upload of the same zip is refused while one does. */
export const STANDING = ['queued', 'running', 'done'] as const;

export function findImport(db: Kysely<Database>, websiteId: string, importId: string): Promise<ImportRow | undefined> {
  return db.selectFrom('imports').selectAll().where('website_id', '=', websiteId).where('id', '=', importId).where('status', '!=', 'deleting').executeTakeFirst();
}

export function findImportById(db: Kysely<Database>, importId: string): Promise<ImportRow | undefined> {
  return db.selectFrom('imports').selectAll().where('id', '=', importId).executeTakeFirst();
}

export function listImports(db: Kysely<Database>, websiteId: string): Promise<ImportRow[]> {
  return db
    .selectFrom('imports')
    .selectAll()
    .where('website_id', '=', websiteId)
    .where('status', '!=', 'deleting')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export function findStandingByDigest(db: Kysely<Database>, websiteId: string, digest: string): Promise<ImportRow | undefined> {
  return db
    .selectFrom('imports')
    .selectAll()
    .where('website_id', '=', websiteId)
    .where('content_digest', '=', digest)
    .where('status', 'in', [...STANDING])
    .executeTakeFirst();
}

export interface NewImport {
  id: string;
  websiteId: string;
  source: string;
  label: string | undefined;
  digest: string;
  data: Buffer;
  filesTotal: number;
  report: unknown;
  accountId: string | null;
  at: string;
  job: JobRow;
}

/** A queued import with its upload and its job, in the caller's transaction. */
export async function insertQueuedImport(db: Kysely<Database>, item: NewImport): Promise<void> {
  await db
    .insertInto('imports')
    .values({
      id: item.id,
      website_id: item.websiteId,
      source: item.source,
      label: item.label?.trim() ?? '',
      content_digest: item.digest,
      upload_bytes: item.data.length,
      status: 'queued',
      job_id: item.job.id,
      first_day: null,
      last_day: null,
      files_total: item.filesTotal,
      files_done: 0,
      rows_read: 0,
      rows_kept: 0,
      rows_skipped: 0,
      report: JSON.stringify(item.report),
      error: null,
      created_by: item.accountId,
      created_at: item.at,
      updated_at: item.at,
      finished_at: null,
    })
    .execute();
  await db.insertInto('import_uploads').values({ import_id: item.id, website_id: item.websiteId, data: item.data }).execute();
  await db.insertInto('integration_jobs').values(item.job).execute();
}

/** A queued job of the imports' kind `kind` for the website. */
export const newImportJob = (websiteId: string, kind: string, at: string): JobRow => newJob(websiteId, IMPORT_PROVIDER, kind, at);

/** Ends the import's job if it is still open: its worker learns it at its next commit. */
export async function cancelJob(db: Kysely<Database>, jobId: string | null, at: string): Promise<void> {
  if (!jobId) return;
  await db
    .updateTable('integration_jobs')
    .set({ status: 'failed', error: 'cancelled: the import was deleted', finished_at: at, lease_owner: null, locked_until: null })
    .where('id', '=', jobId)
    .where('status', 'in', ['queued', 'running'])
    .execute();
}

export const IMPORTED_TABLES = PLAUSIBLE_TABLES;
