import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from 'commander';
import { CliError, type Connection, action, call, connect, websiteIdOf } from './api.ts';
import { type JsonOption, done, emit, printJson, printTable, say, withJson } from './output.ts';
import { type ConfirmOptions, confirm } from './prompt.ts';
import { type WebsiteOption, withWebsite } from './websites.ts';

// Imports: `sightline import <website> <file>` (or `sightline import <file> -w <website>`) uploads
// Plausible's CSV export (zip) or Sightline's own export (NDJSON or gzip); `sightline import umami
// -w <website> --database-url ... --umami-website <id>` reads an Umami database (without
// --umami-website it lists the database's websites); all follow the import's background job with a
// progress bar (on stderr) until it is done or failed, then print the report. `sightline imports
// list|get|delete` look at them and delete one.

const POLL_MS = 1000;
const BAR_WIDTH = 30;

interface ImportItem {
  id: string;
  label: string;
  source: string;
  status: string;
  firstDay: string | null;
  lastDay: string | null;
  error: string | null;
  progress: { filesTotal: number; filesDone: number; daysTotal: number; daysDone: number; rowsRead: number; rowsKept: number; rowsSkipped: number; rowsTotal?: number; percent: number };
  report: {
    files: Array<{ name: string; rowsRead: number; rowsKept: number; rowsSkipped: number }>;
    ignoredFiles: string[];
    skipped: Record<string, number>;
    nativeDays: string[];
    source?: { database: string; websiteName: string; eventsRead: number };
    export?: { domain: string | null; exportedAt: string | null; settings: 'applied' | 'kept' | null };
  };
}

/** One line of progress: a bar of the files (a zip), days (Umami) or records (Sightline's export) done, and the rows read so far. */
export function progressLine(item: ImportItem): string {
  const { percent, filesDone, filesTotal, daysDone, daysTotal, rowsRead, rowsKept, rowsSkipped, rowsTotal } = item.progress;
  const filled = Math.round((percent / 100) * BAR_WIDTH);
  const bar = `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${String(percent).padStart(3)}%`;
  if (item.source === 'sightline-export') return `${bar}  ${rowsRead}/${rowsTotal ?? 0} records read (${rowsKept} kept, ${rowsSkipped} skipped)  ${item.status}`;
  const units = item.source === 'umami' ? `${daysDone}/${daysTotal} days` : `${filesDone}/${filesTotal} files`;
  return `${bar}  ${units}, ${rowsRead} rows read (${rowsKept} kept, ${rowsSkipped} skipped)  ${item.status}`;
}

/** The upload's content type, from its bytes: a zip (Plausible's CSV export), a gzip or NDJSON (Sightline's own export). */
export function uploadType(data: Buffer): string {
  if (data[0] === 0x50 && data[1] === 0x4b) return 'application/zip';
  if (data[0] === 0x1f && data[1] === 0x8b) return 'application/gzip';
  return data.subarray(0, 64).toString('utf8').trimStart().startsWith('{') ? 'application/x-ndjson' : 'application/zip';
}

function printReport(item: ImportItem): void {
  say(`Import ${item.id} ${item.status}${item.firstDay ? `: ${item.firstDay} to ${item.lastDay}` : ''}.`);
  const source = item.report.source;
  if (source) say(`Read ${source.eventsRead} events of the Umami website ${source.websiteName} (${source.database}).`);
  const sightline = item.source === 'sightline-export';
  printTable(
    item.report.files,
    [
      { header: source ? 'table' : sightline ? 'record' : 'file', value: (f) => f.name },
      { header: 'read', value: (f) => f.rowsRead },
      { header: 'kept', value: (f) => f.rowsKept },
      { header: 'skipped', value: (f) => f.rowsSkipped },
    ],
    'No file read.',
  );
  const reasons = Object.entries(item.report.skipped).filter(([, count]) => count > 0);
  if (reasons.length > 0) say(`Skipped rows: ${reasons.map(([reason, count]) => `${count} ${reason}`).join(', ')}.`);
  if (item.report.nativeDays.length > 0) say(`Days left to the website's own events: ${item.report.nativeDays.join(', ')}.`);
  const from = item.report.export;
  if (from?.settings) {
    say(from.settings === 'applied' ? `The website took the export's settings (time zone, currency...).` : `The website kept its own settings: it had data before the import.`);
  }
  if (item.report.ignoredFiles.length > 0) say(`Not read (not an export table): ${item.report.ignoredFiles.join(', ')}.`);
  if (item.error) say(`Error: ${item.error}`);
}

/** Follows an import to its end with the progress bar (unless --no-wait), then prints it. */
async function follow(connection: Connection, websiteId: string, first: ImportItem, options: JsonOption & { wait: boolean }): Promise<void> {
  let item = first;
  if (!options.wait) {
    if (options.json) printJson(item);
    return;
  }
  const live = process.stderr.isTTY === true;
  let last = '';
  for (;;) {
    const line = progressLine(item);
    if (line !== last) process.stderr.write(live ? `\r${line}` : `${line}\n`);
    last = line;
    if (item.status === 'done' || item.status === 'failed') break;
    await sleep(POLL_MS);
    const body = await call(connection.client.GET('/api/v1/admin/websites/{websiteId}/imports/{importId}', { params: { path: { websiteId, importId: item.id } } }), connection.settings.baseUrl);
    item = body.data[0] as ImportItem;
  }
  if (live) process.stderr.write('\n');
  if (options.json) printJson(item);
  else printReport(item);
  if (item.status === 'failed') throw new CliError(`the import failed: ${item.error ?? 'see the report'}`, 1);
}

export function registerImportCommands(program: Command): void {
  const importCommand = program.command('import');
  withJson(
    importCommand
      .description("import Plausible's CSV export (the zip of imported_*.csv files) or Sightline's own export (.ndjson or .ndjson.gz) into a website, showing its progress")
      .argument('<website-or-file>', 'the website (its id or its domain), then the file; or the file alone with -w')
      .argument('[file]', "the zip Plausible exported, or the NDJSON (or its gzip) of `sightline export`")
      .option('-w, --website <website>', 'the website: its id or its domain (then the file is the only argument)')
      .option('--label <label>', 'a name for the import')
      .option('--no-wait', 'answer once the upload is stored, without following the import')
      .addHelpText('after', '\nExamples:\n  $ sightline import example.com plausible-export.zip\n  $ sightline import sightline-example.com-2026-03-01.ndjson.gz -w example.com'),
    'the import once it has ended',
  ).action(
    action(async (first: string, second: string | undefined, options: JsonOption & { label?: string; wait: boolean; website?: string }) => {
      if (options.website !== undefined && second !== undefined) throw new CliError('give the website either as -w or as the first argument, not both', 2);
      if (options.website === undefined && second === undefined) throw new CliError('which website? give it first, or with -w <website>', 2);
      const website = options.website ?? first;
      const file = options.website === undefined ? second! : first;
      let zip: Buffer;
      try {
        zip = await readFile(file);
      } catch (error) {
        throw new CliError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, 2);
      }
      const connection = connect();
      const websiteId = await websiteIdOf(connection, website);
      const created = await call(
        connection.client.POST('/api/v1/admin/websites/{websiteId}/imports', {
          params: { path: { websiteId }, query: options.label ? { label: options.label } : {} },
          body: zip as never,
          bodySerializer: (body: unknown) => body as Buffer,
          headers: { 'content-type': uploadType(zip) },
        }),
        connection.settings.baseUrl,
      );
      const item = created.data[0] as ImportItem;
      say(`Uploaded ${file} (${zip.length} bytes): import ${item.id} is queued.`);
      await follow(connection, websiteId, item, options);
    }),
  );

  // -w, --json, --label and --no-wait are the `import` command's own options (commander gives them
  // to the parent wherever they stand), read here with the subcommand's.
  importCommand
    .command('umami')
    .description('import a website of an Umami database (PostgreSQL), read directly, into the website given with -w; without --umami-website, list its websites (--json, --label, --no-wait as for import)')
    .option('--database-url <url>', "the Umami database's PostgreSQL URL (default: $UMAMI_DATABASE_URL, which keeps the password out of the process list)")
    .option('--umami-website <id>', 'the Umami website to import (its id, a UUID)')
    .addHelpText(
      'after',
      '\nExamples:\n  $ UMAMI_DATABASE_URL=postgres://umami:secret@127.0.0.1:5432/umami sightline import umami -w example.com\n' +
        '  $ UMAMI_DATABASE_URL=postgres://umami:secret@127.0.0.1:5432/umami sightline import umami -w example.com --umami-website 9d4c3e2a-1b2c-4d5e-8f90-123456789abc',
    )
    .action(
    action(async (_options: unknown, command: Command) => {
      const options = command.optsWithGlobals<Partial<WebsiteOption> & JsonOption & { databaseUrl?: string; umamiWebsite?: string; label?: string; wait: boolean }>();
      if (options.website === undefined) throw new CliError('which website? give it with -w <website>', 2);
      const databaseUrl = options.databaseUrl ?? process.env.UMAMI_DATABASE_URL;
      if (!databaseUrl) throw new CliError('give the Umami database: --database-url <url> or UMAMI_DATABASE_URL', 2);
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      if (!options.umamiWebsite) {
        const body = await call(
          connection.client.POST('/api/v1/admin/websites/{websiteId}/imports/umami/websites', { params: { path: { websiteId } }, body: { databaseUrl } }),
          connection.settings.baseUrl,
        );
        emit(options, body, () => {
          printTable(
            body.data,
            [
              { header: 'id', value: (w) => w.id },
              { header: 'name', value: (w) => w.name },
              { header: 'domain', value: (w) => w.domain ?? '' },
              { header: 'events', value: (w) => w.events },
              { header: 'first', value: (w) => w.firstEventAt?.slice(0, 10) ?? '' },
              { header: 'last', value: (w) => w.lastEventAt?.slice(0, 10) ?? '' },
            ],
            'The Umami database has no website.',
          );
          say('Import one with --umami-website <id>.');
        });
        return;
      }
      const created = await call(
        connection.client.POST('/api/v1/admin/websites/{websiteId}/imports/umami', {
          params: { path: { websiteId } },
          body: { databaseUrl, umamiWebsiteId: options.umamiWebsite, ...(options.label ? { label: options.label } : {}) },
        }),
        connection.settings.baseUrl,
      );
      const item = created.data[0] as ImportItem;
      say(`Import ${item.id} of the Umami website ${item.report.source?.websiteName ?? options.umamiWebsite} is queued.`);
      await follow(connection, websiteId, item, options);
    }),
  );

  const imports = program
    .command('imports')
    .description("a website's imports of another tool's history")
    .addHelpText('after', '\nExamples:\n  $ sightline imports list -w example.com\n  $ sightline imports delete <importId> -w example.com --yes');

  withJson(withWebsite(imports.command('list').description('the imports, newest first, with their progress')), 'the imports').action(
    action(async (options: WebsiteOption & JsonOption) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const body = await call(connection.client.GET('/api/v1/admin/websites/{websiteId}/imports', { params: { path: { websiteId } } }), connection.settings.baseUrl);
      emit(options, body, () =>
        printTable(
          body.data as ImportItem[],
          [
            { header: 'id', value: (i) => i.id },
            { header: 'label', value: (i) => i.label },
            { header: 'status', value: (i) => i.status },
            { header: 'days', value: (i) => (i.firstDay ? `${i.firstDay} to ${i.lastDay}` : '') },
            { header: 'rows kept', value: (i) => i.progress.rowsKept },
            { header: 'skipped', value: (i) => i.progress.rowsSkipped },
          ],
          'No imports.',
        ),
      );
    }),
  );

  withJson(withWebsite(imports.command('get').description('one import: its progress and report').argument('<importId>')), 'the import').action(
    action(async (importId: string, options: WebsiteOption & JsonOption) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const body = await call(connection.client.GET('/api/v1/admin/websites/{websiteId}/imports/{importId}', { params: { path: { websiteId, importId } } }), connection.settings.baseUrl);
      emit(options, body, () => printReport(body.data[0] as ImportItem));
    }),
  );

  withJson(
    withWebsite(
      imports
        .command('delete')
        .description('delete an import: its data leaves every read')
        .argument('<importId>')
        .option('-y, --yes', 'do not ask for confirmation (needed when there is no terminal)'),
    ),
    'the result',
  ).action(
    action(async (importId: string, options: WebsiteOption & JsonOption & ConfirmOptions) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      await confirm(`delete import ${importId} of ${options.website}`, 'Its data leaves every report; import the zip again to have it back.', options);
      const body = await call(
        connection.client.DELETE('/api/v1/admin/websites/{websiteId}/imports/{importId}', { params: { path: { websiteId, importId } }, body: {} }),
        connection.settings.baseUrl,
      );
      done(options, body, body.data[0]!.message);
    }),
  );
}
