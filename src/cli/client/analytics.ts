import { type Command, Option } from 'commander';
import { action, call, connect, usage, websiteIdOf } from './api.ts';
import { type JsonOption, emit, printTable, say, withJson } from './output.ts';

const METRICS = ['visitors', 'sessions', 'pageviews', 'revenue', 'payments', 'conversion_rate'];
const INTERVALS = ['hour', 'day', 'week', 'month'] as const;

interface TimeseriesOptions extends JsonOption {
  website?: string;
  fields: string;
  interval: (typeof INTERVALS)[number];
  startAt?: string;
  endAt?: string;
  timezone?: string;
}

export function registerAnalyticsCommands(program: Command): void {
  const analytics = program
    .command('analytics')
    .description('website analytics: the time series of visitors, pageviews, revenue and more')
    .addHelpText(
      'after',
      `
Examples:
  $ sightline analytics timeseries -w example.com
  $ sightline analytics timeseries -w example.com --fields visitors,revenue,conversion_rate --interval week
  $ sightline analytics timeseries -w example.com --interval day --start-at 2026-05-01 --end-at 2026-05-31
  $ sightline analytics timeseries -w example.com --json | jq '.totals'`,
    );

  withJson(
    analytics
      .command('timeseries')
      .description("metrics per hour, day, week or month, in the website's time zone, with totals")
      .option('-w, --website <website>', 'the website: its id or its domain (not needed with a website API key)')
      .option('--fields <list>', `comma-separated metrics: ${METRICS.join(', ')}`, 'visitors,pageviews')
      .addOption(new Option('--interval <interval>', 'the bucket size').choices(INTERVALS).default('day'))
      .option('--start-at <day>', 'the first day (YYYY-MM-DD) or instant (ISO-8601); with --end-at')
      .option('--end-at <day>', 'the last day (included) or instant; with --start-at')
      .option('--timezone <zone>', "an IANA time zone for the buckets (default: the website's)")
      .addHelpText(
        'after',
        '\nWithout --start-at/--end-at: the last 24 hours (hour), 30 days (day, week) or 12 months (month), up to now.',
      ),
    '{"data": [buckets], "fields", "interval", "timezone", "currency", "totals"}',
  ).action(
    action(async (options: TimeseriesOptions) => {
      if ((options.startAt === undefined) !== (options.endAt === undefined)) usage('give --start-at and --end-at together, or neither');
      const connection = connect();
      const websiteId = options.website !== undefined ? await websiteIdOf(connection, options.website) : undefined;
      const query = {
        fields: options.fields,
        interval: options.interval,
        ...(websiteId !== undefined ? { websiteId } : {}),
        ...(options.startAt !== undefined ? { startAt: options.startAt, endAt: options.endAt } : {}),
        ...(options.timezone !== undefined ? { timezone: options.timezone } : {}),
      };
      const body = await call(connection.client.GET('/api/v1/analytics/timeseries', { params: { query } }), connection.settings.baseUrl);
      emit(options, body, () => {
        const rows: Array<Record<string, unknown>> = [
          ...body.data.map((point) => ({ ...point })),
          { name: 'total', ...body.totals },
        ];
        printTable(
          rows,
          [{ header: body.interval, value: (row) => row.name }, ...body.fields.map((field) => ({ header: field, value: (row: Record<string, unknown>) => row[field] ?? 0 }))],
          'No data.',
        );
        say(`Time zone ${body.timezone}; revenue in ${body.currency}.`);
      });
    }),
  );
}
