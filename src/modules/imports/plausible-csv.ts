// The layout of Plausible's CSV export (its lib/plausible/imported/csv_importer.ex and
// lib/plausible/exports.ex; plausible.io/docs/csv-import): a zip of `imported_<table>_<from>_<to>.csv`
// files (or `imported_<table>.csv`), each with a header line naming its columns. Every table has a
// `date` column (YYYY-MM-DD) and the metrics of one day; the key columns say what the row counts.
// Columns are matched by name, so the order may differ and later exports' extra columns are
// ignored; the columns below marked required must be there (older exports lack the optional ones).

export const PLAUSIBLE_TABLES = [
  'imported_visitors',
  'imported_sources',
  'imported_pages',
  'imported_entry_pages',
  'imported_exit_pages',
  'imported_custom_events',
  'imported_locations',
  'imported_devices',
  'imported_browsers',
  'imported_operating_systems',
] as const;
export type PlausibleTable = (typeof PLAUSIBLE_TABLES)[number];

export interface TableLayout {
  /** Text columns, '' when empty. */
  keys: string[];
  /** Keys the file must have. */
  requiredKeys: string[];
  /** Non-negative integer columns, 0 when the file has no such column. */
  metrics: string[];
  requiredMetrics: string[];
}

const SESSION_METRICS = ['visitors', 'visits', 'visit_duration', 'bounces', 'pageviews'];
const SESSION_REQUIRED = ['visitors', 'visits', 'visit_duration', 'bounces'];

export const TABLE_LAYOUTS: Record<PlausibleTable, TableLayout> = {
  imported_visitors: { keys: [], requiredKeys: [], metrics: ['visitors', 'pageviews', 'bounces', 'visits', 'visit_duration'], requiredMetrics: ['visitors', 'pageviews', 'bounces', 'visits', 'visit_duration'] },
  imported_sources: {
    keys: ['source', 'referrer', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_content', 'utm_term'],
    requiredKeys: ['source'],
    metrics: SESSION_METRICS,
    requiredMetrics: SESSION_REQUIRED,
  },
  imported_pages: { keys: ['hostname', 'page'], requiredKeys: ['page'], metrics: ['visitors', 'visits', 'pageviews', 'exits', 'time_on_page'], requiredMetrics: ['visitors', 'pageviews'] },
  imported_entry_pages: {
    keys: ['entry_page'],
    requiredKeys: ['entry_page'],
    metrics: ['visitors', 'entrances', 'visit_duration', 'bounces', 'pageviews'],
    requiredMetrics: ['visitors', 'entrances'],
  },
  imported_exit_pages: { keys: ['exit_page'], requiredKeys: ['exit_page'], metrics: ['visitors', 'visit_duration', 'exits', 'bounces', 'pageviews'], requiredMetrics: ['visitors', 'exits'] },
  imported_custom_events: { keys: ['name', 'link_url', 'path'], requiredKeys: ['name'], metrics: ['visitors', 'events'], requiredMetrics: ['visitors', 'events'] },
  imported_locations: { keys: ['country', 'region', 'city'], requiredKeys: ['country'], metrics: SESSION_METRICS, requiredMetrics: SESSION_REQUIRED },
  imported_devices: { keys: ['device'], requiredKeys: ['device'], metrics: SESSION_METRICS, requiredMetrics: SESSION_REQUIRED },
  imported_browsers: { keys: ['browser', 'browser_version'], requiredKeys: ['browser'], metrics: SESSION_METRICS, requiredMetrics: SESSION_REQUIRED },
  imported_operating_systems: {
    keys: ['operating_system', 'operating_system_version'],
    requiredKeys: ['operating_system'],
    metrics: SESSION_METRICS,
    requiredMetrics: SESSION_REQUIRED,
  },
};

const FILE_NAME = /^(?:.*\/)?(imported_[a-z_]+?)(?:_\d{8}_\d{8})?\.csv$/;

/** The table a file of the zip holds, or null for a file that is not one of the export's. */
export function tableOfFile(fileName: string): PlausibleTable | null {
  const match = FILE_NAME.exec(fileName);
  const table = match?.[1];
  return table && (PLAUSIBLE_TABLES as readonly string[]).includes(table) ? (table as PlausibleTable) : null;
}

/** What is missing from a file's header line, or null when the table can be read from it. */
export function headerProblem(table: PlausibleTable, header: string[]): string | null {
  const names = header.map((name) => name.trim());
  const layout = TABLE_LAYOUTS[table];
  const missing = ['date', ...layout.requiredKeys, ...layout.requiredMetrics].filter((column) => !names.includes(column));
  return missing.length === 0 ? null : `its header lacks ${missing.join(', ')}`;
}

export type SkipReason = 'invalid_date' | 'invalid_number' | 'native_day' | 'too_long';

/** One parsed row: the day, key texts and metric counts, or why it is skipped. */
export type ParsedRow = { day: string; values: Record<string, string | number> } | { skip: SkipReason };

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const COUNT = /^\d{1,15}$/;
const MAX_KEY_LENGTH = 2048;

function validDay(raw: string | undefined): string | null {
  const match = raw === undefined ? null : DAY.exec(raw.trim());
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  if (year < 1970 || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return null;
  return match[0];
}

/** A record of a file (header name -> text) as the row to store. */
export function parseRow(table: PlausibleTable, record: Record<string, string | undefined>): ParsedRow {
  const day = validDay(record.date);
  if (day === null) return { skip: 'invalid_date' };
  const layout = TABLE_LAYOUTS[table];
  const values: Record<string, string | number> = {};
  for (const key of layout.keys) {
    const text = (record[key] ?? '').trim();
    if (text.length > MAX_KEY_LENGTH) return { skip: 'too_long' };
    values[key] = text;
  }
  for (const metric of layout.metrics) {
    const text = (record[metric] ?? '').trim();
    if (text === '' && !layout.requiredMetrics.includes(metric)) {
      values[metric] = 0;
      continue;
    }
    if (!COUNT.test(text)) return { skip: 'invalid_number' };
    values[metric] = Number(text);
  }
  return { day, values };
}
