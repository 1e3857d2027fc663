import type { ExportHeader, ExportListing } from './sightline-export.ts';
import { RECORD_TYPES } from './sightline-export.ts';

// What an import of Sightline's own export read, kept and skipped, per record type, kept as JSON
// on its row in the shape of the other imports' reports (a "file" per record type), with what the
// export says of itself and whether the website's settings were taken from it.

export interface SightlineReport {
  files: { name: string; table: string; rowsRead: number; rowsKept: number; rowsSkipped: number }[];
  ignoredFiles: string[];
  /** Records skipped, by reason: already_present, invalid_record, unknown_type, settings_kept. */
  skipped: Record<string, number>;
  nativeDays: string[];
  /** Record lines the file holds (between the header and the end line): the progress bar's whole. */
  linesTotal: number;
  export: {
    websiteId: string | null;
    domain: string | null;
    exportedAt: string | null;
    /** applied: the website had no data and took the export's settings (time zone, currency...); kept: its own stay; null: not decided yet. */
    settings: 'applied' | 'kept' | null;
  };
}

const TABLE_OF: Record<string, string> = {
  website: 'websites',
  funnel: 'funnels',
  goalCustomization: 'goal_customizations',
  currencyRate: 'currency_rates',
  note: 'notes',
  visitorProfile: 'visitor_profiles',
  event: 'events',
  payment: 'payments',
};

export function emptySightlineReport(listing: ExportListing & { header: ExportHeader }): SightlineReport {
  return {
    files: RECORD_TYPES.map((type) => ({ name: type, table: TABLE_OF[type]!, rowsRead: 0, rowsKept: 0, rowsSkipped: 0 })),
    ignoredFiles: [],
    skipped: { already_present: 0, invalid_record: 0, unknown_type: 0, settings_kept: 0 },
    nativeDays: [],
    linesTotal: listing.records,
    export: { websiteId: listing.header.websiteId, domain: listing.header.domain, exportedAt: listing.header.exportedAt, settings: null },
  };
}

export const parseSightlineReport = (text: string) => JSON.parse(text) as SightlineReport;
