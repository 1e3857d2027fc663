import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { EventStore } from '../stats/event-store.ts';
import { type Lease, commitPage } from '../integrations/job-queue.ts';
import type { JobRow } from '../integrations/integrations.repository.ts';
import { openArchive } from './import-archive.ts';
import { csvRecords } from './import-archive.ts';
import { type ImportReport, parseReport } from './import-report.ts';
import * as repo from './imports.repository.ts';
import { type PlausibleTable, parseRow } from './plausible-csv.ts';

// One run of an import's job: read the stored zip file by file, streaming each CSV, and insert its
// rows in chunks. Each chunk's rows, the import's progress and report, and the job's cursor (file
// and row reached) commit in one transaction, so a run that dies goes on from the last chunk and
// inserts nothing twice. Days on which the website has its own events are skipped (never counted
// twice, docs/decisions.md). The last chunk ends the job and makes the import `done` together.

export const CHUNK_ROWS = 500;

export interface ImportRunContext {
  db: Kysely<Database>;
  store: EventStore;
  lease: Lease;
  stopping(): boolean;
  /** Rows per chunk (tests use small ones to see several chunks). */
  chunkRows?: number;
}

export type RunEnd = 'done' | 'lost' | 'stopped' | 'failed';

interface Cursor {
  file: number;
  row: number;
}

/** A fault of the upload itself: another attempt reads the same bytes, so the import fails at once. */
export class ImportFileError extends Error {}

export class LeaseLost extends Error {}

export const nowIso = () => new Date().toISOString();

export async function nativeDaysOf(store: EventStore, websiteId: string): Promise<Set<string>> {
  // Events are never later than now; ClickHouse's Date stops at 2149, so the window ends soon after today.
  const soon = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10);
  const days = await store.dailyTotals(websiteId, '1971-01-01', soon);
  return new Set(days.filter((row) => Number(row.visitors) > 0 || Number(row.pageviews) > 0 || Number(row.sessions) > 0).map((row) => row.day));
}

interface Progress {
  report: ImportReport;
  rowsRead: number;
  rowsKept: number;
  rowsSkipped: number;
  filesDone: number;
  firstDay: string | null;
  lastDay: string | null;
}

/**
 * The import a run of `job` reads and its stored upload, the import marked running; null when the
 * import is gone or being deleted (the run has nothing to do). Every import job starts so.
 */
export async function startRun(db: Kysely<Database>, job: JobRow): Promise<{ imported: repo.ImportRow; upload: Buffer } | null> {
  const imported = await db.selectFrom('imports').selectAll().where('job_id', '=', job.id).executeTakeFirst();
  if (!imported || imported.status === 'deleting') return null;
  const upload = await db.selectFrom('import_uploads').select('data').where('import_id', '=', imported.id).executeTakeFirst();
  if (!upload) throw new ImportFileError('the upload is gone');
  if (imported.status === 'queued') {
    await db.updateTable('imports').set({ status: 'running', updated_at: nowIso() }).where('id', '=', imported.id).where('status', '=', 'queued').execute();
  }
  return { imported, upload: upload.data };
}

export async function runImportJob(ctx: ImportRunContext, job: JobRow): Promise<RunEnd> {
  const { db } = ctx;
  const started = await startRun(db, job);
  if (!started) return 'lost';
  const { imported } = started;
  const upload = { data: started.upload };

  const cursor: Cursor = job.cursor ? (JSON.parse(job.cursor) as Cursor) : { file: 0, row: 0 };
  const progress: Progress = {
    report: parseReport(imported.report),
    rowsRead: imported.rows_read,
    rowsKept: imported.rows_kept,
    rowsSkipped: imported.rows_skipped,
    filesDone: imported.files_done,
    firstDay: imported.first_day,
    lastDay: imported.last_day,
  };
  const nativeDays = await nativeDaysOf(ctx.store, imported.website_id);
  const chunkRows = ctx.chunkRows ?? CHUNK_ROWS;

  let archive;
  try {
    archive = await openArchive(upload.data);
  } catch (error) {
    throw new ImportFileError(`the zip cannot be read: ${(error as Error).message}`);
  }
  try {
    for (let index = cursor.file; index < archive.files.length; index += 1) {
      const file = archive.files[index]!;
      const fileReport = progress.report.files[index]!;
      const skipRows = index === cursor.file ? cursor.row : 0;
      let rowInFile = 0;
      let chunk: Record<string, string | number>[] = [];
      let chunkSkips = 0;
      const commit = async (last: boolean) => {
        const next: Cursor | null = last ? (index + 1 < archive.files.length ? { file: index + 1, row: 0 } : null) : { file: index, row: rowInFile };
        if (last) progress.filesDone += 1;
        const ok = await commitChunk(ctx, job, imported.id, file.table, chunk, progress, next);
        chunk = [];
        chunkSkips = 0;
        return ok;
      };
      let committing = false;
      let records;
      try {
        records = csvRecords(await archive.open(file.name));
      } catch (error) {
        throw new ImportFileError(`${file.name} cannot be read: ${(error as Error).message}`);
      }
      try {
        for await (const record of records) {
          rowInFile += 1;
          if (rowInFile <= skipRows) continue;
          const parsed = parseRow(file.table, record);
          progress.rowsRead += 1;
          fileReport.rowsRead += 1;
          if ('skip' in parsed || nativeDays.has(parsed.day)) {
            const reason = 'skip' in parsed ? parsed.skip : 'native_day';
            if (!('skip' in parsed) && !progress.report.nativeDays.includes(parsed.day)) progress.report.nativeDays.push(parsed.day);
            progress.report.skipped[reason] += 1;
            progress.rowsSkipped += 1;
            fileReport.rowsSkipped += 1;
            chunkSkips += 1;
          } else {
            chunk.push({ website_id: imported.website_id, import_id: imported.id, day: parsed.day, ...parsed.values });
            progress.rowsKept += 1;
            fileReport.rowsKept += 1;
            if (progress.firstDay === null || parsed.day < progress.firstDay) progress.firstDay = parsed.day;
            if (progress.lastDay === null || parsed.day > progress.lastDay) progress.lastDay = parsed.day;
          }
          if (chunk.length + chunkSkips >= chunkRows) {
            committing = true;
            if (!(await commit(false))) return 'lost';
            committing = false;
            if (ctx.stopping()) return 'stopped';
          }
        }
      } catch (error) {
        if (error instanceof LeaseLost) return 'lost';
        // A failure while reading (not while storing) is the file's: damaged data, broken CSV.
        if (!committing) throw new ImportFileError(`${file.name} line ${rowInFile + 2}: ${(error as Error)?.message ?? String(error)}`);
        throw error;
      }
      if (!(await commit(true))) return 'lost';
      if (ctx.stopping() && index + 1 < archive.files.length) return 'stopped';
    }
  } finally {
    archive.close();
  }
  return 'done';
}

async function commitChunk(
  ctx: ImportRunContext,
  job: JobRow,
  importId: string,
  table: PlausibleTable,
  rows: Record<string, string | number>[],
  progress: Progress,
  next: Cursor | null,
): Promise<boolean> {
  return commitImportChunk(
    ctx,
    job,
    importId,
    { [table]: rows },
    {
      rows_read: progress.rowsRead,
      rows_kept: progress.rowsKept,
      rows_skipped: progress.rowsSkipped,
      files_done: progress.filesDone,
      first_day: progress.firstDay,
      last_day: progress.lastDay,
      report: JSON.stringify(progress.report),
    },
    next === null ? null : JSON.stringify(next),
  );
}

/** Rows per INSERT statement (SQLite bounds a statement's parameters). */
const INSERT_BATCH = 200;

/**
 * One chunk of an import, in one transaction: its rows, the import's progress (`set`), and the
 * job's cursor (null: the last chunk, which makes the import done and deletes what it was read
 * from: the upload, or the source's sealed connection). False when the import or the job's lease
 * was lost meanwhile (deleted, taken over): nothing of the chunk is kept then.
 */
export async function commitImportChunk(
  ctx: Pick<ImportRunContext, 'db' | 'lease'>,
  job: JobRow,
  importId: string,
  inserts: Partial<Record<PlausibleTable, Record<string, string | number>[]>>,
  set: Partial<Record<'rows_read' | 'rows_kept' | 'rows_skipped' | 'files_done' | 'days_done', number>> & {
    first_day: string | null;
    last_day: string | null;
    report: string;
  },
  cursor: string | null,
): Promise<boolean> {
  const at = nowIso();
  try {
    await ctx.db.transaction().execute(async (trx) => {
      for (const [table, rows] of Object.entries(inserts) as [PlausibleTable, Record<string, string | number>[]][]) {
        for (let start = 0; start < rows.length; start += INSERT_BATCH) {
          await trx.insertInto(table).values(rows.slice(start, start + INSERT_BATCH) as never).execute();
        }
      }
      const done = cursor === null;
      const updated = await trx
        .updateTable('imports')
        .set({ ...set, updated_at: at, ...(done ? { status: 'done', finished_at: at } : {}) })
        .where('id', '=', importId)
        .where('status', '=', 'running')
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 0) throw new LeaseLost();
      if (!(await commitPage(trx, job, ctx.lease, { cursor, payments: 0 }, at))) throw new LeaseLost();
      if (done) {
        await trx.deleteFrom('import_uploads').where('import_id', '=', importId).execute();
        await trx.deleteFrom('import_connections').where('import_id', '=', importId).execute();
      }
    });
    return true;
  } catch (error) {
    if (error instanceof LeaseLost) return false;
    throw error;
  }
}

/**
 * Ends an import whose source cannot be read: failed, with the reason; its rows are removed by its
 * deletion. The source's sealed connection goes at once (nothing will read it again).
 */
export async function failImport(db: Kysely<Database>, jobId: string, error: string): Promise<void> {
  const at = nowIso();
  await db.transaction().execute(async (trx) => {
    const failed = await trx
      .updateTable('imports')
      .set({ status: 'failed', error, updated_at: at, finished_at: at })
      .where('job_id', '=', jobId)
      .where('status', 'in', ['queued', 'running'])
      .returning('id')
      .execute();
    for (const { id } of failed) await trx.deleteFrom('import_connections').where('import_id', '=', id).execute();
  });
}

/** Days deleted per statement and table: bounds each statement of a large import's deletion. */
export const DELETE_DAYS = 7;

const addDays = (day: string, days: number) => new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

/**
 * Deletes an import's rows a few days at a time (the cursor is the next day to delete), then the
 * import itself; a run that dies deletes again from its cursor.
 */
export async function runDeleteJob(ctx: ImportRunContext, job: JobRow): Promise<RunEnd> {
  const { db } = ctx;
  const importId = job.cursor?.split(' ')[0] ?? '';
  const target = await repo.findImportById(db, importId);
  if (!target) {
    await commitPage(db, job, ctx.lease, { cursor: null, payments: 0 }, nowIso());
    return 'done';
  }
  let day = job.cursor?.split(' ')[1] ?? target.first_day;
  const lastDay = target.last_day;
  while (day && lastDay && day <= lastDay) {
    if (ctx.stopping()) return 'stopped';
    const from = day;
    const until = addDays(day, DELETE_DAYS);
    const ok = await db.transaction().execute(async (trx) => {
      for (const table of repo.IMPORTED_TABLES) {
        await trx.deleteFrom(table).where('import_id', '=', importId).where('day', '>=', from).where('day', '<', until).execute();
      }
      return commitPage(trx, job, ctx.lease, { cursor: `${importId} ${until}`, payments: 0 }, nowIso());
    });
    if (!ok) return 'lost';
    day = until;
  }
  const ok = await db.transaction().execute(async (trx) => {
    // Rows outside first_day..last_day cannot exist; the cascade removes any left by a failed run.
    await trx.deleteFrom('imports').where('id', '=', importId).execute();
    return commitPage(trx, job, ctx.lease, { cursor: null, payments: 0 }, nowIso());
  });
  return ok ? 'done' : 'lost';
}
