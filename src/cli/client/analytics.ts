import { type Command, Option } from 'commander';
import { action, call, connect } from './api.ts';
import { type ReportOptions, count, registerBreakdownCommands, reportQuery, sayPage, withFilters, withPaging, withRange, withWebsiteRef } from './breakdowns.ts';
import { emit, printRecord, printTable, say, withJson } from './output.ts';
import { registerRealtimeCommands } from './visitors.ts';
import { registerReportExportCommand } from './export.ts';

// `sightline analytics ...`: the website API's reads (website-api.md section 3). Each command is
// one literal client.GET; the breakdowns (pages, countries, ...) live in breakdowns.ts, realtime
// and realtime-map in visitors.ts.

const METRICS = ['visitors', 'sessions', 'pageviews', 'revenue', 'payments', 'conversion_rate'];
const OVERVIEW_METRICS = ['visitors', 'sessions', 'pageviews', 'bounce_rate', 'avg_session_duration', 'currency', 'revenue', 'payments', 'revenue_per_visitor', 'conversion_rate'];
const INTERVALS = ['hour', 'day', 'week', 'month'] as const;

interface TimeseriesOptions extends ReportOptions {
  fields: string;
  interval: (typeof INTERVALS)[number];
}

const percent = (value: number | undefined) => (value === undefined ? undefined : `${value}%`);

/** 255000 as "4m 15s", 3723000 as "1h 2m 3s". */
function duration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  const [h, m, s] = [Math.floor(seconds / 3600), Math.floor((seconds % 3600) / 60), seconds % 60];
  return [h ? `${h}h` : '', h || m ? `${m}m` : '', `${s}s`].filter(Boolean).join(' ');
}

export function registerAnalyticsCommands(program: Command): void {
  const analytics = program
    .command('analytics')
    .description('website analytics: overview, time series, breakdowns, goals, funnels and who is online')
    .addHelpText(
      'after',
      `
-w takes the website's id, trackingId or domain; with a website API key (df_) it may be left out.
--start-at/--end-at: both or neither, days (YYYY-MM-DD, the end day included) or ISO instants;
without them the overview and breakdowns cover all time. --filter narrows any read.

Examples:
  $ sightline analytics overview -w example.com --start-at 2026-03-01 --end-at 2026-03-31
  $ sightline analytics pages -w example.com --filter country=is:US,CA --filter device=mobile --limit 20
  $ sightline analytics referrers -w example.com --filter page=contains:/blog --json | jq '.data[0]'
  $ sightline analytics goal-properties -w example.com --event signup --property plan
  $ sightline analytics funnel -w example.com 665f1c2e9b1d4a0012345678
  $ sightline analytics timeseries -w example.com --fields visitors,revenue,conversion_rate --interval week
  $ sightline analytics timeseries -w example.com --json | jq '.totals'`,
    );

  withJson(
    withFilters(
      withRange(withWebsiteRef(analytics.command('overview').description('visitors, sessions, pageviews, bounce rate, session length, revenue and conversion over a range'))),
    ).option('--fields <list>', `comma-separated metrics (default all): ${OVERVIEW_METRICS.join(', ')}`),
    '[{visitors, sessions, pageviews, bounce_rate, ...}]',
  ).action(
    action(async (options: ReportOptions) => {
      const connection = connect();
      const query = await reportQuery(connection, options);
      const body = await call(connection.client.GET('/api/v1/analytics/overview', { params: { query } }), connection.settings.baseUrl);
      emit(options, body, () => {
        const o: (typeof body.data)[number] = body.data[0] ?? {};
        const money = (value: number | undefined) => (value === undefined ? undefined : o.currency ? `${value} ${o.currency}` : value);
        const pairs: Array<[string, unknown]> = [
          ['Visitors', o.visitors],
          ['Sessions', o.sessions],
          ['Pageviews', o.pageviews],
          ['Bounce rate', percent(o.bounce_rate)],
          ['Avg. session', o.avg_session_duration === undefined ? undefined : duration(o.avg_session_duration)],
          ['Revenue', money(o.revenue)],
          ['Payments', o.payments],
          ['Revenue/visitor', money(o.revenue_per_visitor)],
          ['Conversion rate', percent(o.conversion_rate)],
        ];
        const shown = pairs.filter(([, value]) => value !== undefined);
        if (shown.length > 0) printRecord(shown);
        else if (o.currency !== undefined) printRecord([['Currency', o.currency]]);
      });
    }),
  );

  withJson(
    withFilters(
      withRange(
        withWebsiteRef(analytics.command('timeseries').description("metrics per hour, day, week or month, in the website's time zone, with totals")),
      ),
    )
      .option('--fields <list>', `comma-separated metrics: ${METRICS.join(', ')}`, 'visitors,pageviews')
      .addOption(new Option('--interval <interval>', 'the bucket size').choices(INTERVALS).default('day'))
      .addHelpText(
        'after',
        '\nWithout --start-at/--end-at: the last 24 hours (hour), 30 days (day, week) or 12 months (month), up to now.',
      ),
    '{"data": [buckets], "fields", "interval", "timezone", "currency", "totals"}',
  ).action(
    action(async (options: TimeseriesOptions) => {
      const connection = connect();
      const query = { ...(await reportQuery(connection, options)), fields: options.fields, interval: options.interval };
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

  registerBreakdownCommands(analytics);

  withJson(
    withPaging(
      withFilters(
        withRange(
          withWebsiteRef(analytics.command('goal-properties').description("completions and visitors per value of a custom goal's properties"))
            .requiredOption('--event <goal>', 'the custom goal (event name), e.g. signup')
            .option('--property <name>', 'only this property (default all)'),
        ),
      ),
      'rows',
    ),
    '{"data": [{property, value, completions, visitors}], "pagination"}',
  ).action(
    action(async (options: ReportOptions & { event: string; property?: string }) => {
      const connection = connect();
      const query = {
        ...(await reportQuery(connection, options)),
        eventName: options.event,
        ...(options.property !== undefined ? { propertyName: options.property } : {}),
      };
      const body = await call(connection.client.GET('/api/v1/analytics/goals/properties', { params: { query } }), connection.settings.baseUrl);
      emit(options, body, () => {
        printTable(
          body.data,
          [
            { header: 'property', value: (r) => r.property },
            { header: 'value', value: (r) => r.value },
            { header: 'completions', value: (r) => r.completions },
            { header: 'visitors', value: (r) => r.visitors },
          ],
          `No properties recorded on goal ${options.event}.`,
        );
        sayPage('Rows', body.data.length, body.pagination);
      });
    }),
  );

  registerRealtimeCommands(analytics);
  registerReportExportCommand(analytics);

  withJson(
    withWebsiteRef(analytics.command('metadata').description("the website's domain, name, time zone, currency and KPI")).option(
      '--fields <list>',
      'comma-separated: domain, name, timezone, currency, kpi, kpiColorScheme, logo (default all)',
    ),
    '[{domain, name, timezone, currency, kpi, kpiColorScheme, logo}]',
  ).action(
    action(async (options: ReportOptions) => {
      const connection = connect();
      const query = await reportQuery(connection, options);
      const body = await call(connection.client.GET('/api/v1/analytics/metadata', { params: { query } }), connection.settings.baseUrl);
      emit(options, body, () => {
        const m: (typeof body.data)[number] = body.data[0] ?? {};
        const labels: Array<[keyof typeof m, string]> = [
          ['domain', 'Domain'],
          ['name', 'Name'],
          ['timezone', 'Time zone'],
          ['currency', 'Currency'],
          ['kpi', 'KPI'],
          ['kpiColorScheme', 'KPI colors'],
          ['logo', 'Logo'],
        ];
        printRecord(labels.filter(([key]) => key in m).map(([key, label]) => [label, m[key]]));
      });
    }),
  );

  withJson(
    withFilters(
      withRange(
        withWebsiteRef(
          analytics
            .command('funnel')
            .description('visitors and conversion at each step of a funnel (default: the last 30 days)')
            .argument('<funnelId>', 'the funnel\'s id (sightline funnels list)'),
        ),
      ),
    ),
    '[{funnelId, name, steps: [...], visitors, conversionRate}]',
  ).action(
    action(async (funnelId: string, options: ReportOptions) => {
      const connection = connect();
      const query = await reportQuery(connection, options);
      const body = await call(
        connection.client.GET('/api/v1/analytics/funnels/{funnelId}', { params: { path: { funnelId }, query } }),
        connection.settings.baseUrl,
      );
      emit(options, body, () => {
        const funnel = body.data[0]!;
        printTable(
          funnel.steps.map((step, index) => ({ ...step, index: index + 1 })),
          [
            { header: '#', value: (s) => s.index },
            { header: 'step', value: (s) => s.name },
            { header: 'type', value: (s) => s.type },
            { header: 'visitors', value: (s) => s.visitors },
            { header: 'conversion', value: (s) => percent(s.conversionRate) },
            { header: 'drop-off', value: (s) => percent(s.dropOff) },
            { header: 'revenue', value: (s) => s.revenue },
          ],
          'The funnel has no steps.',
        );
        say(`Funnel "${funnel.name}": ${count(funnel.visitors, 'visitor')} entered, ${funnel.conversionRate}% reached the last step.`);
      });
    }),
  );
}
