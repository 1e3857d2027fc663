import { type ImportRow, SIGHTLINE_SOURCE } from './imports.repository.ts';
import { presentSightlineImport } from './sightline-import.presenter.ts';
import { parseReport } from './import-report.ts';
import type { ImportViewType } from './imports.schemas.ts';
import { presentedCommon } from './presented-common.ts';

export function presentImport(row: ImportRow): ImportViewType {
  if (row.source === SIGHTLINE_SOURCE) return presentSightlineImport(row);
  const report = parseReport(row.report);
  const umami = report.source?.kind === 'umami' ? report.source : null;
  const tool = umami ? `Umami ${umami.websiteName}` : 'Plausible';
  const label = row.label !== '' ? row.label : row.first_day && row.last_day ? `${tool} ${row.first_day} to ${row.last_day}` : umami ? tool : 'Plausible CSV export';
  const share = umami ? (row.days_total === 0 ? 0 : row.days_done / row.days_total) : row.files_total === 0 ? 0 : row.files_done / row.files_total;
  return {
    ...presentedCommon(row),
    source: umami ? 'umami' : 'plausible-csv',
    label,
    progress: {
      filesTotal: row.files_total,
      filesDone: row.files_done,
      rowsRead: row.rows_read,
      rowsKept: row.rows_kept,
      rowsSkipped: row.rows_skipped,
      daysTotal: row.days_total,
      daysDone: row.days_done,
      percent: row.status === 'done' ? 100 : Math.min(100, Math.floor(share * 100)),
    },
    report: { files: report.files, ignoredFiles: report.ignoredFiles, skipped: report.skipped, nativeDays: report.nativeDays, ...(umami ? { source: umami } : {}) },
  };
}
