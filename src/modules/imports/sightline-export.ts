import { createHash } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { invalidField } from '../../errors.ts';
import { EXPORT_FORMAT, EXPORT_VERSION } from '../export/raw-export.ts';

// Reading an upload of Sightline's own raw export (docs/export-format.md): NDJSON, optionally
// gzip-compressed, streamed line by line (never inflated whole in memory), and checked before
// anything is stored: the header's format and version, and an end line whose counts match the
// records the file holds (a file cut short is refused at the upload, not halfway through).

/** The record types of version 1, in the order the export writes them. */
export const RECORD_TYPES = ['website', 'funnel', 'goalCustomization', 'currencyRate', 'note', 'visitorProfile', 'event', 'payment'] as const;
export type RecordType = (typeof RECORD_TYPES)[number];

/** Decompressed bytes an upload may hold: a gzip that inflates past this is refused. */
export const MAX_EXPORT_BYTES = 8 * 1024 ** 3;

const GZIP_MAGIC = [0x1f, 0x8b];

export const isGzip = (data: Buffer) => data.length >= 2 && data[0] === GZIP_MAGIC[0] && data[1] === GZIP_MAGIC[1];

/** Whether an upload is this export (NDJSON starting with its header, or gzip) rather than a zip. */
export function looksLikeSightlineExport(data: Buffer): boolean {
  if (isGzip(data)) return true;
  const start = data.subarray(0, 64).toString('utf8').trimStart();
  return start.startsWith('{');
}

export interface ExportHeader {
  format: string;
  version: number;
  exportedAt: string | null;
  websiteId: string | null;
  domain: string | null;
}

/** Bytes handed on at a time. */
const SLICE_BYTES = 64 * 1024;

function* slices(data: Buffer): Generator<Buffer> {
  for (let start = 0; start < data.length; start += SLICE_BYTES) yield data.subarray(start, start + SLICE_BYTES);
}

/**
 * The upload's lines, decompressed when gzip, without their line ends (\n or \r\n); empty lines
 * included (the numbering stays the file's). Pulled a slice at a time, so the file is never split
 * whole in memory, and the event loop gets a turn between slices.
 */
export async function* exportLines(data: Buffer): AsyncGenerator<string> {
  const source = Readable.from(slices(data), { objectMode: false });
  const input = isGzip(data) ? source.pipe(createGunzip()) : source;
  if (input !== source) source.once('error', (error) => input.destroy(error));
  const decoder = new StringDecoder('utf8');
  const line = (text: string) => (text.endsWith('\r') ? text.slice(0, -1) : text);
  let carry = '';
  for await (const chunk of input) {
    const parts = (carry + decoder.write(chunk as Buffer)).split('\n');
    carry = parts.pop()!;
    for (const part of parts) yield line(part);
    await new Promise((resolve) => setImmediate(resolve));
  }
  const rest = carry + decoder.end();
  if (rest !== '') yield line(rest);
}

/** The header line's problem, or null: the format this server reads, a version it knows. */
export function headerProblem(line: string): { header: ExportHeader } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { problem: 'line 1 is not JSON: the file is not a Sightline export (NDJSON, from GET /api/v1/export/raw)' };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return { problem: 'line 1 is not the export header' };
  const header = value as Record<string, unknown>;
  if (header.format !== EXPORT_FORMAT) return { problem: `line 1: format must be "${EXPORT_FORMAT}", not ${JSON.stringify(header.format ?? null)}` };
  if (typeof header.version !== 'number' || !Number.isInteger(header.version) || header.version < 1) {
    return { problem: 'line 1: version must be a whole number of at least 1' };
  }
  if (header.version > EXPORT_VERSION) {
    return { problem: `line 1: version ${header.version} is newer than this server reads (up to ${EXPORT_VERSION}); upgrade Sightline first` };
  }
  const text = (name: string) => (typeof header[name] === 'string' ? (header[name] as string) : null);
  return { header: { format: EXPORT_FORMAT, version: header.version, exportedAt: text('exportedAt'), websiteId: text('websiteId'), domain: text('domain') } };
}

/** The end line's counts, or null when the line is not an end line. */
export function endCounts(line: string): Record<string, number> | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (!value || typeof value !== 'object' || (value as { type?: unknown }).type !== 'end') return null;
  const counts = (value as { counts?: unknown }).counts;
  if (!counts || typeof counts !== 'object' || Array.isArray(counts)) return null;
  const out: Record<string, number> = {};
  for (const [type, count] of Object.entries(counts)) {
    if (typeof count !== 'number' || !Number.isInteger(count) || count < 0) return null;
    out[type] = count;
  }
  return out;
}

export interface ExportListing {
  header: ExportHeader;
  /** sha256 of the decompressed lines: the same export, gzip-compressed or not, is the same file. */
  digest: string;
  /** Record lines between the header and the end line. */
  records: number;
  counts: Record<string, number>;
}

/**
 * Checks an upload before anything is stored, reading it through once (gzip is inflated as a
 * stream): the header, then that the last line is the end line and that its counts add up to the
 * records in between. A 400 naming what is wrong otherwise.
 */
export async function inspectExport(data: Buffer): Promise<ExportListing> {
  let header: ExportHeader | null = null;
  let lineCount = 0;
  let last = '';
  let bytes = 0;
  let records = 0;
  const hash = createHash('sha256');
  try {
    for await (const line of exportLines(data)) {
      hash.update(line).update('\n');
      lineCount += 1;
      bytes += line.length + 1;
      if (bytes > MAX_EXPORT_BYTES) throw invalidField('body', `the export inflates to more than ${MAX_EXPORT_BYTES} bytes`);
      if (lineCount === 1) {
        const read = headerProblem(line);
        if ('problem' in read) throw invalidField('body', read.problem);
        header = read.header;
        continue;
      }
      if (line.trim() === '') continue;
      if (last !== '') records += 1;
      last = line;
    }
  } catch (error) {
    if (error instanceof Error && 'statusCode' in error) throw error;
    throw invalidField('body', `cannot be read: ${(error as Error).message} (send the NDJSON export, or its gzip)`);
  }
  if (header === null) throw invalidField('body', 'is empty: send the NDJSON file GET /api/v1/export/raw answered');
  const counts = last === '' ? null : endCounts(last);
  if (counts === null) throw invalidField('body', 'the file was cut short: its last line is not the end line ({"type": "end", "counts": ...})');
  const expected = Object.values(counts).reduce((sum, count) => sum + count, 0);
  if (expected !== records) throw invalidField('body', `the end line counts ${expected} records but the file holds ${records}: the file is damaged or cut`);
  return { header, digest: hash.digest('hex'), records, counts };
}
