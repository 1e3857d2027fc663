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
    const report = emptySightlineReport(listing);
    await repo.insertQueuedImport(trx, { id, websiteId, source: repo.SIGHTLINE_SOURCE, label, digest, data, filesTotal: report.files.length, report, accountId, at, job });
  });
  return presentImport((await repo.findImport(db, websiteId, id))!);
}
