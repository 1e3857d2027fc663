import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { conflict } from '../../errors.ts';
import { newId } from '../../lib/ids.ts';
import { newJob } from '../integrations/job-queue.ts';
import { presentImport } from './imports.presenter.ts';
import * as repo from './imports.repository.ts';
import type { ImportViewType } from './imports.schemas.ts';
import { inspectExport } from './sightline-export.ts';
import { emptySightlineReport } from './sightline-report.ts';

// An upload of Sightline's own export (docs/export-format.md): checked whole (header, end line,
// counts) before anything is stored, then stored with its job in one transaction; the job reads
// it in the background (sightline-import-job.ts). The same file imported again into the website
// while its earlier import stands is refused (409), as the CSV import's zip is.

export async function createSightlineImport(
  db: Kysely<Database>,
  websiteId: string,
  accountId: string | null,
  data: Buffer,
  label: string | undefined,
): Promise<ImportViewType> {
  const listing = await inspectExport(data);
  const digest = listing.digest;
  const at = new Date().toISOString();
  const id = newId();
  const job = newJob(websiteId, repo.SIGHTLINE_SOURCE, repo.SIGHTLINE_IMPORT_JOB, at);
  await db.transaction().execute(async (trx) => {
    const earlier = await repo.findStandingByDigest(trx, websiteId, digest);
    if (earlier) throw conflict(`This export was already imported into the website (import ${earlier.id}); delete that import to import it again`);
    await trx
      .insertInto('imports')
      .values({
        id,
        website_id: websiteId,
        source: repo.SIGHTLINE_SOURCE,
        label: label?.trim() ?? '',
        content_digest: digest,
        upload_bytes: data.length,
        status: 'queued',
        job_id: job.id,
        first_day: null,
        last_day: null,
        files_total: listing.header ? emptySightlineReport(listing).files.length : 0,
        files_done: 0,
        rows_read: 0,
        rows_kept: 0,
        rows_skipped: 0,
        report: JSON.stringify(emptySightlineReport(listing)),
        error: null,
        created_by: accountId,
        created_at: at,
        updated_at: at,
        finished_at: null,
      })
      .execute();
    await trx.insertInto('import_uploads').values({ import_id: id, website_id: websiteId, data }).execute();
    await trx.insertInto('integration_jobs').values(job).execute();
  });
  return presentImport((await repo.findImport(db, websiteId, id))!);
}
