import { presentedCommon } from './presented-common.ts';
import type { ImportRow } from './imports.repository.ts';
import type { ImportViewType } from './imports.schemas.ts';
import { parseSightlineReport } from './sightline-report.ts';

/** An import of Sightline's own export: its progress counts record lines (the bar is lines read of the file's). */
export function presentSightlineImport(row: ImportRow): ImportViewType {
  const report = parseSightlineReport(row.report);
  const from = report.export.domain ?? 'a website';
  const label = row.label !== '' ? row.label : `Sightline export of ${from}${report.export.exportedAt ? ` (${report.export.exportedAt.slice(0, 10)})` : ''}`;
  const percent = row.status === 'done' ? 100 : report.linesTotal === 0 ? 0 : Math.min(99, Math.floor((row.rows_read / report.linesTotal) * 100));
  return {
    ...presentedCommon(row),
    source: 'sightline-export',
    label,
    progress: {
      filesTotal: row.files_total,
      filesDone: row.files_done,
      rowsRead: row.rows_read,
      rowsKept: row.rows_kept,
      rowsSkipped: row.rows_skipped,
      daysTotal: row.days_total,
      daysDone: row.days_done,
      rowsTotal: report.linesTotal,
      percent,
    },
    report: { files: report.files, ignoredFiles: report.ignoredFiles, skipped: report.skipped, nativeDays: report.nativeDays, export: report.export },
  };
}
