import type { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { invalidField } from '../../errors.ts';
import { type PlausibleTable, headerProblem, tableOfFile } from './plausible-csv.ts';

// Reading the uploaded zip (yauzl, which checks each entry's sizes and CRC as it inflates) and its
// CSV files (csv-parse, streaming, so a file is never held whole in memory).

/** Decompressed bytes a whole upload may hold: a zip that inflates past this is refused. */
export const MAX_UNCOMPRESSED_BYTES = 4 * 1024 ** 3;

export interface ArchiveFile {
  /** The entry's name in the zip. */
  name: string;
  table: PlausibleTable;
}

export interface ArchiveListing {
  files: ArchiveFile[];
  /** Entries that are not one of the export's tables (left unread, named in the report). */
  ignored: string[];
}

async function openZip(data: Buffer): Promise<ZipFile> {
  return yauzl.fromBufferPromise(data, { lazyEntries: true, decodeStrings: true, validateEntrySizes: true });
}

async function entriesOf(zip: ZipFile): Promise<Entry[]> {
  return new Promise((resolve, reject) => {
    const entries: Entry[] = [];
    zip.on('entry', (entry: Entry) => {
      entries.push(entry);
      zip.readEntry();
    });
    zip.on('end', () => resolve(entries));
    zip.on('error', reject);
    zip.readEntry();
  });
}

/** The zip's entries, sorted by name so every run reads them in one order. */
async function readEntries(data: Buffer): Promise<{ zip: ZipFile; entries: Entry[] }> {
  const zip = await openZip(data);
  const entries = (await entriesOf(zip)).sort((a, b) => (a.fileName < b.fileName ? -1 : a.fileName > b.fileName ? 1 : 0));
  return { zip, entries };
}

function listingOf(entries: Entry[]): ArchiveListing {
  const files: ArchiveFile[] = [];
  const ignored: string[] = [];
  for (const entry of entries) {
    if (entry.fileName.endsWith('/')) continue;
    const table = tableOfFile(entry.fileName);
    if (table) files.push({ name: entry.fileName, table });
    else ignored.push(entry.fileName);
  }
  return { files, ignored };
}

/** A CSV file's records (header name -> text), streamed. */
export function csvRecords(stream: Readable): AsyncIterable<Record<string, string>> & Readable {
  return piped(stream, parse({ columns: (header: string[]) => header.map((name) => name.trim()), bom: true, skip_empty_lines: true, relax_column_count: true }));
}

/**
 * The zip entry piped into the parser, a failure of the entry (damaged data, a wrong CRC) ending the
 * parser with it: pipe() alone leaves the parser waiting forever, and the job with it.
 */
function piped<T extends Readable & NodeJS.WritableStream>(source: Readable, parser: T): T {
  source.once('error', (error) => parser.destroy(error));
  return source.pipe(parser);
}

async function firstLine(zip: ZipFile, entry: Entry): Promise<string[]> {
  const stream = await zip.openReadStreamPromise(entry);
  const parser = piped(stream, parse({ to_line: 1, bom: true }));
  try {
    for await (const record of parser) return (record as string[]).map((name) => name.trim());
    return [];
  } finally {
    stream.destroy();
  }
}

/**
 * Checks an upload before anything is stored: a zip, holding at least one of the export's CSV
 * files, each with a header the table can be read from. A 400 naming what is wrong otherwise.
 */
export async function inspectArchive(data: Buffer): Promise<ArchiveListing> {
  let zip: ZipFile;
  let entries: Entry[];
  try {
    ({ zip, entries } = await readEntries(data));
  } catch {
    throw invalidField('body', 'is not a zip file (send the zip Plausible exports, as application/zip)');
  }
  try {
    const total = entries.reduce((sum, entry) => sum + entry.uncompressedSize, 0);
    if (total > MAX_UNCOMPRESSED_BYTES) throw invalidField('body', `the zip inflates to more than ${MAX_UNCOMPRESSED_BYTES} bytes`);
    const listing = listingOf(entries);
    if (listing.files.length === 0) {
      throw invalidField('body', 'the zip holds no imported_*.csv file of a Plausible CSV export (imported_visitors_YYYYMMDD_YYYYMMDD.csv, ...)');
    }
    const byName = new Map(entries.map((entry) => [entry.fileName, entry]));
    for (const file of listing.files) {
      let header: string[];
      try {
        header = await firstLine(zip, byName.get(file.name)!);
      } catch {
        throw invalidField(`body.${file.name}`, 'cannot be read as CSV');
      }
      const problem = headerProblem(file.table, header);
      if (problem) throw invalidField(`body.${file.name}`, problem);
    }
    return listing;
  } finally {
    zip.close();
  }
}

/** Opens the zip for a run of the job: its files and a way to stream one. */
export async function openArchive(data: Buffer): Promise<ArchiveListing & { open(name: string): Promise<Readable>; close(): void }> {
  const { zip, entries } = await readEntries(data);
  const byName = new Map(entries.map((entry) => [entry.fileName, entry]));
  return {
    ...listingOf(entries),
    open: (name) => zip.openReadStreamPromise(byName.get(name)!),
    close: () => zip.close(),
  };
}
