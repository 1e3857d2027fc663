import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { conflict, notFound } from '../../errors.ts';
import { newId } from '../../lib/ids.ts';
import { newJob } from '../integrations/job-queue.ts';
import { inspectArchive } from './import-archive.ts';
import { emptyReport } from './import-report.ts';
import { presentImport } from './imports.presenter.ts';
import * as repo from './imports.repository.ts';
import type { ImportViewType } from './imports.schemas.ts';

// Imports of Plausible's CSV export: the upload is checked (a zip, with the export's files and
// headers) and stored with its job in one transaction; the job reads it in the background
// (import-job.ts). The same zip imported again while its earlier import stands is refused (409).

export async function createImport(
  db: Kysely<Database>,
  websiteId: string,
  accountId: string | null,
  data: Buffer,
  label: string | undefined,
): Promise<ImportViewType> {
  const listing = await inspectArchive(data);
  const digest = createHash('sha256').update(data).digest('hex');
  const at = new Date().toISOString();
  const id = newId();
  const job = repo.newImportJob(websiteId, repo.IMPORT_JOB, at);
  await db.transaction().execute(async (trx) => {
    const earlier = await repo.findStandingByDigest(trx, websiteId, digest);
    if (earlier) throw conflict(`This zip was already imported into the website (import ${earlier.id}); delete that import to import it again`);
    const report = emptyReport(listing.files, listing.ignored);
    await repo.insertQueuedImport(trx, { id, websiteId, source: repo.IMPORT_PROVIDER, label, digest, data, filesTotal: listing.files.length, report, accountId, at, job });
  });
  return presentImport((await repo.findImport(db, websiteId, id))!);
}

export async function listImports(db: Kysely<Database>, websiteId: string): Promise<ImportViewType[]> {
  return (await repo.listImports(db, websiteId)).map(presentImport);
}

export async function getImport(db: Kysely<Database>, websiteId: string, importId: string): Promise<ImportViewType> {
  const row = await repo.findImport(db, websiteId, importId);
  if (!row) throw notFound('Import not found');
  return presentImport(row);
}

/**
 * Deletes an import: at once it leaves every read and the list; its job (if still open) stops,
 * and a deletion job removes its rows a few days at a time (import-job.ts).
 */
export async function deleteImport(db: Kysely<Database>, websiteId: string, importId: string): Promise<{ message: string; id: string }> {
  const at = new Date().toISOString();
  await db.transaction().execute(async (trx) => {
    const row = await repo.findImport(trx, websiteId, importId);
    if (!row) throw notFound('Import not found');
    await repo.cancelJob(trx, row.job_id, at);
    const job =
      row.source === repo.SIGHTLINE_SOURCE
        ? { ...newJob(websiteId, repo.SIGHTLINE_SOURCE, repo.SIGHTLINE_DELETE_JOB, at), cursor: importId }
        : { ...repo.newImportJob(websiteId, repo.IMPORT_DELETE_JOB, at), cursor: importId };
    await trx.updateTable('imports').set({ status: 'deleting', job_id: job.id, updated_at: at }).where('id', '=', importId).execute();
    await trx.deleteFrom('import_connections').where('import_id', '=', importId).execute();
    await trx.insertInto('integration_jobs').values(job).execute();
  });
  return { message: 'Import deleted; its rows are being removed in the background', id: importId };
}
