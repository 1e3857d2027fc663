import type { SkipReason } from './plausible-csv.ts';

// What an import read, kept and skipped, file by file, kept as JSON on its row and answered as is.

export interface FileReport {
  name: string;
  table: string;
  rowsRead: number;
  rowsKept: number;
  rowsSkipped: number;
}

export interface ImportReport {
  files: FileReport[];
  /** Entries of the zip that are not one of the export's tables: not read. */
  ignoredFiles: string[];
  /** Rows skipped, by reason (native_day: the website has its own events that day). */
  skipped: Record<SkipReason, number>;
  /** The days skipped because the website has its own events on them. */
  nativeDays: string[];
  /** A database source (Umami): what was read from where (no credential). Absent for a zip. */
  source?: SourceReport;
}

export interface SourceReport {
  kind: 'umami';
  /** host:port/database */
  database: string;
  websiteId: string;
  websiteName: string;
  /** Umami's page views and custom events read so far. */
  eventsRead: number;
}

export function emptyReport(files: { name: string; table: string }[], ignoredFiles: string[]): ImportReport {
  return {
    files: files.map((file) => ({ name: file.name, table: file.table, rowsRead: 0, rowsKept: 0, rowsSkipped: 0 })),
    ignoredFiles,
    skipped: { native_day: 0, invalid_date: 0, invalid_number: 0, too_long: 0 },
    nativeDays: [],
  };
}

/** An Umami import's report: one entry per imported table it fills, before anything is read. */
export function emptySourceReport(tables: readonly string[], source: SourceReport): ImportReport {
  return { ...emptyReport(tables.map((table) => ({ name: table, table })), []), source };
}

export function parseReport(text: string): ImportReport {
  return JSON.parse(text) as ImportReport;
}
