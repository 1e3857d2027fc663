import { stringify } from 'csv-stringify/sync';

// Reports as CSV: one header row of the columns found in the rows (nested objects flattened to
// dotted names: campaign.utm_source), values quoted when they hold a comma, quote or line break,
// and any text cell that starts with = + - @ tab or carriage return prefixed with a single quote
// so a spreadsheet shows it instead of running it (OWASP, "CSV Injection"). Numbers stay numbers.

type Cell = string | number | boolean | null;

/** One level of dotted names per nesting; arrays become their JSON text. */
export function flattenRow(row: Record<string, unknown>, prefix = '', into: Record<string, Cell> = {}): Record<string, Cell> {
  for (const [key, value] of Object.entries(row)) {
    const name = prefix === '' ? key : `${prefix}.${key}`;
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) flattenRow(value as Record<string, unknown>, name, into);
    else if (Array.isArray(value)) into[name] = JSON.stringify(value);
    else if (value === undefined) into[name] = null;
    else into[name] = value as Cell;
  }
  return into;
}

/** The rows as CSV text; the columns are the union of the rows' names in first-seen order. */
export function toCsv(rows: Array<Record<string, unknown>>, emptyColumns: string[] = []): string {
  const flat = rows.map((row) => flattenRow(row));
  const columns: string[] = [];
  for (const row of flat) for (const name of Object.keys(row)) if (!columns.includes(name)) columns.push(name);
  if (columns.length === 0) columns.push(...emptyColumns);
  return stringify(
    flat.map((row) => columns.map((name) => row[name] ?? null)),
    { header: true, columns, escape_formulas: true, cast: { boolean: (value) => (value ? 'true' : 'false') } },
  );
}
