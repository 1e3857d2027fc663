import { DateTime } from 'luxon';
import type { Keyring } from '../../crypto/keyring.ts';
import type { JobRow } from '../integrations/integrations.repository.ts';
import { ImportFileError, type ImportRunContext, type RunEnd, commitImportChunk, nativeDaysOf } from './import-job.ts';
import { parseReport } from './import-report.ts';
import type { ImportRow } from './imports.repository.ts';
import type { PlausibleTable } from './plausible-csv.ts';
import { AGGREGATE_TABLES, aggregateSpan } from './umami-aggregates.ts';
import { openUmamiConnection } from './umami-connection.ts';
import { connectUmami, parseUmamiUrl, readOnly, schemaProblem } from './umami-source.ts';

// One run of an Umami import's job: connect to the Umami database (read-only), then read it a few
// local days at a time (IMPORT_UMAMI_CHUNK_DAYS): each chunk's aggregates are computed in Umami's
// PostgreSQL, then its rows, the import's progress and report, and the job's cursor (the next day
// to read) commit in one transaction, so a run that dies goes on from the last chunk and inserts
// nothing twice. Days on which the website has its own events are skipped, as with a zip.

export interface UmamiCursor {
  /** The next local day to read, and the last one (the day of Umami's last event when the import was made). */
  next: string;
  last: string;
  /** The website's time zone when the import was made: its days stay those days if the zone changes meanwhile. */
  zone: string;
}

export interface UmamiRunContext extends ImportRunContext {
  keyring: Keyring;
  allowedHosts: readonly string[];
  chunkDays: number;
}

const addDays = (day: string, days: number) => DateTime.fromISO(day, { zone: 'utc' }).plus({ days }).toISODate()!;
const daysBetween = (first: string, last: string) => Math.round(DateTime.fromISO(last, { zone: 'utc' }).diff(DateTime.fromISO(first, { zone: 'utc' }), 'days').days) + 1;
/** The instant a local day of `zone` begins. */
const midnight = (day: string, zone: string) => DateTime.fromISO(day, { zone }).startOf('day').toJSDate();

export async function runUmamiImportJob(ctx: UmamiRunContext, job: JobRow, imported: ImportRow): Promise<RunEnd> {
  const { db } = ctx;
  const source = await openUmamiConnection(db, ctx.keyring, imported.id, imported.website_id);
  let target;
  try {
    target = parseUmamiUrl(source.databaseUrl, ctx.allowedHosts);
  } catch (error) {
    throw new ImportFileError(`the Umami database may no longer be read: ${(error as Error).message}`);
  }
  if (imported.status === 'queued') {
    await db.updateTable('imports').set({ status: 'running', updated_at: new Date().toISOString() }).where('id', '=', imported.id).where('status', '=', 'queued').execute();
  }
  const cursor = JSON.parse(job.cursor ?? 'null') as UmamiCursor | null;
  if (!cursor) throw new ImportFileError('the import has no days to read');
  const report = parseReport(imported.report);
  const counts = { read: imported.rows_read, kept: imported.rows_kept, skipped: imported.rows_skipped, daysDone: imported.days_done };
  let firstDay = imported.first_day;
  let lastDay = imported.last_day;
  const nativeDays = await nativeDaysOf(ctx.store, imported.website_id);
  const fileOf = new Map(report.files.map((file) => [file.table, file]));

  const connection = await connectUmami(target);
  try {
    const problem = await readOnly(connection, schemaProblem);
    if (problem) throw new ImportFileError(`the database ${problem}`);
    let next = cursor.next;
    while (next <= cursor.last) {
      const until = [addDays(next, ctx.chunkDays - 1), cursor.last].sort()[0]!;
      const span = { websiteId: source.umamiWebsiteId, from: midnight(next, cursor.zone), until: midnight(addDays(until, 1), cursor.zone), timeZone: cursor.zone };
      const { rows, eventsRead, tooLong } = await readOnly(connection, (client) => aggregateSpan(client, span));
      const inserts: Partial<Record<PlausibleTable, Record<string, string | number>[]>> = {};
      for (const table of AGGREGATE_TABLES) {
        const file = fileOf.get(table)!;
        const kept: Record<string, string | number>[] = [];
        for (const row of rows[table]) {
          counts.read += 1;
          file.rowsRead += 1;
          if (nativeDays.has(row.day)) {
            if (!report.nativeDays.includes(row.day)) report.nativeDays.push(row.day);
            report.skipped.native_day += 1;
            counts.skipped += 1;
            file.rowsSkipped += 1;
            continue;
          }
          kept.push({ website_id: imported.website_id, import_id: imported.id, day: row.day, ...row.values });
          counts.kept += 1;
          file.rowsKept += 1;
          if (firstDay === null || row.day < firstDay) firstDay = row.day;
          if (lastDay === null || row.day > lastDay) lastDay = row.day;
        }
        inserts[table] = kept;
      }
      report.skipped.too_long += tooLong;
      counts.skipped += tooLong;
      report.source!.eventsRead += eventsRead;
      counts.daysDone += daysBetween(next, until);
      const after = addDays(until, 1);
      const more = after <= cursor.last;
      const committed = await commitImportChunk(
        ctx,
        job,
        imported.id,
        inserts,
        {
          rows_read: counts.read,
          rows_kept: counts.kept,
          rows_skipped: counts.skipped,
          days_done: counts.daysDone,
          files_done: more ? 0 : report.files.length,
          first_day: firstDay,
          last_day: lastDay,
          report: JSON.stringify(report),
        },
        more ? JSON.stringify({ ...cursor, next: after } satisfies UmamiCursor) : null,
      );
      if (!committed) return 'lost';
      next = after;
      if (more && ctx.stopping()) return 'stopped';
    }
    return 'done';
  } finally {
    await connection.close();
  }
}
