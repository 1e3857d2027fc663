import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { type Command, Option } from 'commander';
import { createSightlineClient } from '../../../sdk/index.ts';
import { type Connection, action, call, connect, usage } from './api.ts';
import { type ReportOptions, reportQuery, withFilters, withRange, withWebsiteRef, websiteRefOf } from './breakdowns.ts';
import { say } from './output.ts';

// `sightline export` (the website's raw data as NDJSON) and `sightline analytics export` (every
// report of a period as a zip of CSV files). Both write the answer to a file as it arrives; the
// client has no overall time limit here, since a large website's export takes longer than a read.

/** A client like the others but without their 30-second limit on the whole answer. */
function downloadClient(connection: Connection) {
  return createSightlineClient({ baseUrl: connection.settings.baseUrl, token: connection.settings.token });
}

async function save(stream: unknown, file: string): Promise<void> {
  const output = file === '-' ? process.stdout : createWriteStream(file);
  await pipeline(Readable.fromWeb(stream as WebReadableStream), output);
}

interface ReportExportOptions extends ReportOptions {
  interval?: string;
  output?: string;
}

interface RawExportOptions {
  website: string;
  gzip?: boolean;
  output?: string;
}

export function registerReportExportCommand(analytics: Command): void {
  withFilters(
    withRange(
      withWebsiteRef(
        analytics
          .command('export')
          .description('every report of a period (overview, time series, each breakdown) as CSV files in a zip')
          .addOption(new Option('--interval <interval>', 'the buckets of timeseries.csv').choices(['hour', 'day', 'week', 'month']).default('day'))
          .option('-o, --output <file>', 'where to write the zip (default sightline-reports-<start>-<end>.zip; - for stdout)'),
      ),
    ),
  ).action(
    action(async (options: ReportExportOptions) => {
      if (options.startAt === undefined || options.endAt === undefined) usage('give the period: --start-at and --end-at');
      const connection = connect();
      const query = { ...(await reportQuery(connection, options)), startAt: options.startAt, endAt: options.endAt, interval: options.interval as 'day' };
      const file = options.output ?? `sightline-reports-${options.startAt}-${options.endAt}.zip`.replace(/[^A-Za-z0-9.-]+/g, '_');
      const stream = await call(downloadClient(connection).GET('/api/v1/analytics/export', { params: { query }, parseAs: 'stream' }), connection.settings.baseUrl);
      await save(stream, file);
      if (file !== '-') say(`Wrote ${file}.`);
    }),
  );
}

export function registerExportCommand(program: Command): void {
  program
    .command('export')
    .description("the website's raw events and payments, with its settings, funnels and profiles, as NDJSON (owner only; docs/export-format.md)")
    .requiredOption('-w, --website <website>', 'the website: its id, trackingId or domain')
    .option('--gzip', 'compress it with gzip')
    .option('-o, --output <file>', 'where to write it (default sightline-<website>.ndjson[.gz]; - for stdout)')
    .addHelpText('after', '\nExample:\n  $ sightline export -w example.com --gzip -o example.ndjson.gz')
    .action(
      action(async (options: RawExportOptions) => {
        const connection = connect();
        const websiteId = await websiteRefOf(connection, options.website);
        const file = options.output ?? `sightline-${options.website.replace(/[^A-Za-z0-9.-]+/g, '_')}.ndjson${options.gzip ? '.gz' : ''}`;
        const stream = await call(
          downloadClient(connection).GET('/api/v1/export/raw', { params: { query: { websiteId, ...(options.gzip ? { gzip: true } : {}) } }, parseAs: 'stream' }),
          connection.settings.baseUrl,
        );
        await save(stream, file);
        if (file !== '-') say(`Wrote ${file}.`);
      }),
    );
}
