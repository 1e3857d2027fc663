import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { JobRow } from '../integrations/integrations.repository.ts';
import { commitPage } from '../integrations/job-queue.ts';
import type { EventStore } from '../stats/event-store.ts';
import { ImportFileError, type ImportRunContext, type RunEnd, startRun } from './import-job.ts';
import { RECORD_TYPES, endCounts, exportLines, headerProblem } from './sightline-export.ts';
import { type ChunkOutcome, derivedId, storeChunk } from './sightline-import-rows.ts';
import { InvalidRecord, type ParsedRecord, isRecordType, parseRecord } from './sightline-records.ts';
import { type SightlineReport, parseSightlineReport } from './sightline-report.ts';

// One run of the job of an import of Sightline's own export: the stored upload is read line by
// line, the records gathered into chunks, and each chunk's rows, the import's progress and report,
// and the job's cursor (the last line read) commit in one transaction. A run that dies goes on
// from the line after the last committed chunk, so nothing is stored twice. The end line's counts
// are checked against the records read; the last chunk ends the job and makes the import `done`.

/** What storing events needs besides the database: where they live, and the fold they feed. */
export interface ImportEventHooks {
  inClickHouse: boolean;
  /** Awaited before each chunk: the rollup deriver holds the import back as it holds ingestion. */
  throttle(): Promise<void>;
  /** After a chunk's commit: its events are to be folded in (or shipped to ClickHouse). */
  stored(count: number): void;
  /** After a deletion's chunk asked for a build of the website's derived tables. */
  rebuilding(): void;
  /** With ClickHouse: which of these event ids, of events between the two instants (ms), the website holds there. */
  presentIds(websiteId: string, ids: string[], fromMs: number, toMs: number): Promise<Set<string>>;
  /** With ClickHouse: deletes these events there, with what is derived from them and their goal statistics. */
  deleteEvents(websiteId: string, ids: string[]): Promise<void>;
}

/** Hooks for a relational event store with nothing to wake (tests, and a worker built without them). */
export const NO_EVENT_HOOKS: ImportEventHooks = {
  inClickHouse: false,
  throttle: async () => {},
  stored: () => {},
  rebuilding: () => {},
  presentIds: async () => new Set(),
  deleteEvents: async () => {},
};

export interface SightlineRunContext extends ImportRunContext {
  events: ImportEventHooks;
}

interface Cursor {
  /** Lines of the file read and committed (the header is line 1). */
  line: number;
}

const nowIso = () => new Date().toISOString();
const dayOf = (instant: string) => instant.slice(0, 10);

/** Whether the website has nothing yet (no event, payment or waiting event): its settings are then taken from the export. */
async function isFresh(db: Kysely<Database>, store: EventStore, websiteId: string): Promise<boolean> {
  const soon = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10);
  const days = await store.dailyTotals(websiteId, '1971-01-01', soon);
  if (days.some((row) => Number(row.visitors) > 0 || Number(row.pageviews) > 0 || Number(row.sessions) > 0)) return false;
  for (const table of ['payments', 'rollup_backlog', 'event_relay'] as const) {
    if (await db.selectFrom(table).select('website_id').where('website_id', '=', websiteId).limit(1).executeTakeFirst()) return false;
  }
  return true;
}

class LeaseLost extends Error {}

interface Progress {
  report: SightlineReport;
  rowsRead: number;
  rowsKept: number;
  rowsSkipped: number;
  firstDay: string | null;
  lastDay: string | null;
}

export async function runSightlineImportJob(ctx: SightlineRunContext, job: JobRow): Promise<RunEnd> {
  const { db } = ctx;
  const started = await startRun(db, job);
  if (!started) return 'lost';
  const { imported, upload } = started;
  const cursor: Cursor = job.cursor ? (JSON.parse(job.cursor) as Cursor) : { line: 0 };
  const progress: Progress = {
    report: parseSightlineReport(imported.report),
    rowsRead: imported.rows_read,
    rowsKept: imported.rows_kept,
    rowsSkipped: imported.rows_skipped,
    firstDay: imported.first_day,
    lastDay: imported.last_day,
  };
  const websiteId = imported.website_id;
  if (progress.report.export.settings === null) {
    progress.report.export.settings = (await isFresh(db, ctx.store, websiteId)) ? 'applied' : 'kept';
  }
  const target = { websiteId, importId: imported.id, eventsInClickHouse: ctx.events.inClickHouse, applySettings: progress.report.export.settings === 'applied' };
  const chunkRows = ctx.chunkRows ?? 500;
  const fileOf = (type: string) => progress.report.files.find((file) => file.name === type)!;

  let lineNo = 0;
  let chunk: ParsedRecord[] = [];
  let ended = false;
  const commit = async (last: boolean) => {
    await ctx.events.throttle();
    const stored = await commitChunk(ctx, job, target, chunk, progress, last ? null : { line: lineNo });
    chunk = [];
    if (stored === null) return false;
    if (stored > 0) ctx.events.stored(stored);
    return true;
  };
  try {
    for await (const line of exportLines(upload)) {
      lineNo += 1;
      if (lineNo <= cursor.line) continue;
      if (lineNo === 1) {
        const read = headerProblem(line);
        if ('problem' in read) throw new ImportFileError(read.problem);
        continue;
      }
      if (line.trim() === '') continue;
      if (ended) throw new ImportFileError(`line ${lineNo}: a line after the end line`);
      let value: { type?: unknown; data?: unknown; counts?: unknown };
      try {
        value = JSON.parse(line) as typeof value;
      } catch {
        throw new ImportFileError(`line ${lineNo} is not JSON: the file is damaged`);
      }
      if (value?.type === 'end') {
        checkCounts(endCounts(line), progress.report, lineNo);
        ended = true;
        continue;
      }
      progress.rowsRead += 1;
      const type = value?.type;
      if (!isRecordType(type)) {
        skip(progress, 'unknown_type', null);
      } else {
        fileOf(type).rowsRead += 1;
        try {
          chunk.push(parseRecord(type, value.data, websiteId));
        } catch (error) {
          if (!(error instanceof InvalidRecord)) throw error;
          skip(progress, 'invalid_record', type);
        }
      }
      if (chunk.length >= chunkRows) {
        if (!(await commit(false))) return 'lost';
        if (ctx.stopping()) return 'stopped';
      }
    }
  } catch (error) {
    if (error instanceof LeaseLost) return 'lost';
    if (error instanceof ImportFileError) throw error;
    if (error instanceof Error && /incorrect header check|unexpected end of file|invalid/i.test(error.message) && (error as { code?: string }).code?.startsWith('Z_')) {
      throw new ImportFileError(`line ${lineNo + 1}: the gzip cannot be read (${error.message})`);
    }
    throw error;
  }
  if (!ended) throw new ImportFileError(`the file ends at line ${lineNo} without its end line: it was cut short`);
  return (await commit(true)) ? 'done' : 'lost';
}

function skip(progress: Progress, reason: string, type: string | null): void {
  progress.rowsSkipped += 1;
  progress.report.skipped[reason] = (progress.report.skipped[reason] ?? 0) + 1;
  if (type !== null) progress.report.files.find((file) => file.name === type)!.rowsSkipped += 1;
}

/** The end line's counts against the records read: a difference means lines were lost. */
function checkCounts(counts: Record<string, number> | null, report: SightlineReport, lineNo: number): void {
  if (counts === null) throw new ImportFileError(`line ${lineNo}: the end line has no counts`);
  for (const type of RECORD_TYPES) {
    const read = report.files.find((file) => file.name === type)!.rowsRead;
    if ((counts[type] ?? 0) !== read) throw new ImportFileError(`the end line counts ${counts[type] ?? 0} ${type} records, the file holds ${read}: it is damaged`);
  }
}

function apply(progress: Progress, outcome: ChunkOutcome): number {
  let kept = 0;
  for (const [type, count] of Object.entries(outcome.kept)) {
    progress.report.files.find((file) => file.name === type)!.rowsKept += count;
    kept += count;
  }
  for (const [type, count] of Object.entries(outcome.present)) {
    if (count === 0) continue;
    progress.report.files.find((file) => file.name === type)!.rowsSkipped += count;
    progress.report.skipped.already_present = (progress.report.skipped.already_present ?? 0) + count;
    progress.rowsSkipped += count;
  }
  progress.rowsKept += kept;
  if (outcome.settingsKept > 0) {
    progress.report.files.find((file) => file.name === 'website')!.rowsSkipped += outcome.settingsKept;
    progress.report.skipped.settings_kept = (progress.report.skipped.settings_kept ?? 0) + outcome.settingsKept;
    progress.rowsSkipped += outcome.settingsKept;
  }
  for (const instant of outcome.eventInstants) {
    const day = dayOf(instant);
    if (progress.firstDay === null || day < progress.firstDay) progress.firstDay = day;
    if (progress.lastDay === null || day > progress.lastDay) progress.lastDay = day;
  }
  return outcome.eventInstants.length;
}

/** Stores the chunk with the progress and the cursor (null: the last chunk); the events stored, or null when the lease was lost. */
async function commitChunk(
  ctx: SightlineRunContext,
  job: JobRow,
  target: Parameters<typeof storeChunk>[1],
  records: ParsedRecord[],
  progress: Progress,
  next: Cursor | null,
): Promise<number | null> {
  const at = nowIso();
  // With ClickHouse the events are not in the relational database: the ids it holds are asked first, outside the transaction.
  let present: Set<string> | undefined;
  if (target.eventsInClickHouse) {
    const events = records.flatMap((record) => (record.type === 'event' ? [record.row] : []));
    const instants = events.map((event) => Date.parse(event.occurredAt));
    const ids = events.flatMap((event) => [event.id, derivedId(target.websiteId, 'event', event.id)]);
    present = await ctx.events.presentIds(target.websiteId, ids, Math.min(...instants), Math.max(...instants));
  }
  // The progress is changed only once the transaction commits: a rolled-back chunk is read again.
  const before = structuredClone(progress);
  try {
    return await ctx.db.transaction().execute(async (trx) => {
      const events = apply(progress, await storeChunk(trx, { ...target, presentInClickHouse: present }, records));
      const done = next === null;
      const updated = await trx
        .updateTable('imports')
        .set({
          rows_read: progress.rowsRead,
          rows_kept: progress.rowsKept,
          rows_skipped: progress.rowsSkipped,
          files_done: done ? progress.report.files.length : 0,
          first_day: progress.firstDay,
          last_day: progress.lastDay,
          report: JSON.stringify(progress.report),
          updated_at: at,
          ...(done ? { status: 'done', finished_at: at } : {}),
        })
        .where('id', '=', target.importId)
        .where('status', '=', 'running')
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 0) throw new LeaseLost();
      if (!(await commitPage(trx, job, ctx.lease, { cursor: next === null ? null : JSON.stringify(next), payments: 0 }, at))) throw new LeaseLost();
      if (done) await trx.deleteFrom('import_uploads').where('import_id', '=', target.importId).execute();
      return events;
    });
  } catch (error) {
    Object.assign(progress, before);
    if (error instanceof LeaseLost) return null;
    throw error;
  }
}
