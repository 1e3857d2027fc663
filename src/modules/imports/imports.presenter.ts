import { type ImportRow, SIGHTLINE_SOURCE } from './imports.repository.ts';
import { presentSightlineImport } from './sightline-import.presenter.ts';
import { parseReport } from './import-report.ts';
import type { ImportViewType } from './imports.schemas.ts';
import { presentedCommon } from './presented-common.ts';

export function presentImport(row: ImportRow): ImportViewType {
  if (row.source === SIGHTLINE_SOURCE) return presentSightlineImport(row);
  const report = parseReport(row.report);
  const label = row.label !== '' ? row.label : row.first_day && row.last_day ? `Plausible ${row.first_day} to ${row.last_day}` : 'Plausible CSV export';
  return {
    ...presentedCommon(row),
    source: 'plausible-csv',
    label,
    progress: {
      filesTotal: row.files_total,
      filesDone: row.files_done,
      rowsRead: row.rows_read,
      rowsKept: row.rows_kept,
      rowsSkipped: row.rows_skipped,
      percent: row.status === 'done' ? 100 : row.files_total === 0 ? 0 : Math.floor((row.files_done / row.files_total) * 100),
    },
    report: { files: report.files, ignoredFiles: report.ignoredFiles, skipped: report.skipped, nativeDays: report.nativeDays },
  };
}
