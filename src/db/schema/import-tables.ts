import type { ColumnType } from 'kysely';

// Imports of another tool's history (0032): the uploads, their progress and report, and the
// daily aggregates they brought, one table per table of Plausible's CSV export.

/** A bigint count: a number when written, a number or (PostgreSQL) a numeric string when read. */
export type Count = ColumnType<number | string, number | undefined, number>;

export interface ImportsTable {
  id: string;
  website_id: string;
  source: string;
  label: string;
  /** sha256 of the zip: the same file imported again for the same website is refused. */
  content_digest: string;
  upload_bytes: number;
  /** queued, running, done, failed, deleting */
  status: string;
  /** The integration_jobs row that reads the upload (or deletes the rows). */
  job_id: string | null;
  first_day: string | null;
  last_day: string | null;
  files_total: number;
  files_done: number;
  rows_read: number;
  rows_kept: number;
  rows_skipped: number;
  /** Days of the source to read (a source read day by day: Umami); 0 for a zip. */
  days_total: ColumnType<number, number | undefined, number>;
  days_done: ColumnType<number, number | undefined, number>;
  /** JSON: the report (import-report.ts). */
  report: string;
  error: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

/** An Umami import's connection URL, sealed (credentials.ts's keys), until the import ends. */
export interface ImportConnectionsTable {
  import_id: string;
  website_id: string;
  key_id: string;
  ciphertext: string;
}

export interface ImportUploadsTable {
  import_id: string;
  website_id: string;
  data: Buffer;
}

/** A row an import of Sightline's own export stored (0035): deleting the import deletes these rows. */
export interface ImportRawRowsTable {
  import_id: string;
  /** event, payment, funnel, note, visitorProfile, goalCustomization, currencyRate */
  kind: string;
  /** The row's id; for rows keyed otherwise, their key (visitor id, goal name, currency). */
  row_id: string;
}

interface ImportedBase {
  website_id: string;
  import_id: string;
  /** A local day of the website, YYYY-MM-DD. */
  day: string;
}

export interface ImportedVisitorsTable extends ImportedBase {
  visitors: Count;
  pageviews: Count;
  bounces: Count;
  visits: Count;
  visit_duration: Count;
}

interface SessionMetrics {
  visitors: Count;
  visits: Count;
  visit_duration: Count;
  bounces: Count;
  pageviews: Count;
}

export interface ImportedSourcesTable extends ImportedBase, SessionMetrics {
  source: string;
  referrer: string;
  utm_source: string;
  utm_medium: string;
  utm_campaign: string;
  utm_content: string;
  utm_term: string;
}

export interface ImportedPagesTable extends ImportedBase {
  hostname: string;
  page: string;
  visitors: Count;
  visits: Count;
  pageviews: Count;
  exits: Count;
  time_on_page: Count;
}

export interface ImportedEntryPagesTable extends ImportedBase {
  entry_page: string;
  visitors: Count;
  entrances: Count;
  visit_duration: Count;
  bounces: Count;
  pageviews: Count;
}

export interface ImportedExitPagesTable extends ImportedBase {
  exit_page: string;
  visitors: Count;
  visit_duration: Count;
  exits: Count;
  bounces: Count;
  pageviews: Count;
}

export interface ImportedCustomEventsTable extends ImportedBase {
  name: string;
  link_url: string;
  path: string;
  visitors: Count;
  events: Count;
}

export interface ImportedLocationsTable extends ImportedBase, SessionMetrics {
  country: string;
  region: string;
  city: string;
}

export interface ImportedDevicesTable extends ImportedBase, SessionMetrics {
  device: string;
}

export interface ImportedBrowsersTable extends ImportedBase, SessionMetrics {
  browser: string;
  browser_version: string;
}

export interface ImportedOperatingSystemsTable extends ImportedBase, SessionMetrics {
  operating_system: string;
  operating_system_version: string;
}
