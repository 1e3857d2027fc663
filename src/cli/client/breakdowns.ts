import { type Command, InvalidArgumentError } from 'commander';
import type { SightlineClient } from '../../../sdk/index.ts';
import { DIMENSIONS } from '../../modules/stats/stats.filters.ts';
import { type Connection, action, call, connect, usage, websiteIdOf } from './api.ts';
import { type Column, type JsonOption, emit, printTable, say, withJson } from './output.ts';

// The website API's breakdowns (`sightline analytics pages`, `countries`, ...), and the options
// every website API read shares: the website, the range, the time zone, paging and --filter.
// Each breakdown is one literal client.GET (the CLI coverage test finds them by their path).

export interface ReportOptions extends JsonOption {
  website?: string;
  startAt?: string;
  endAt?: string;
  timezone?: string;
  fields?: string;
  limit?: number;
  offset?: number;
  filter?: string[];
}

export interface ReportQuery {
  websiteId?: string;
  startAt?: string;
  endAt?: string;
  timezone?: string;
  fields?: string;
  limit?: number;
  offset?: number;
  [filter: `filter_${string}`]: string;
}

const FILTER_HELP = `only what matches <dimension>=[<op>:]<v1>,<v2> (repeatable, AND-ed; values OR-ed; op is, is_not, contains, does_not_contain); dimensions: ${DIMENSIONS.join(', ')}`;

function wholeNumber(minimum: number) {
  return (value: string): number => {
    const number = Number(value);
    if (!Number.isInteger(number) || number < minimum) throw new InvalidArgumentError(`must be a whole number of ${minimum} or more`);
    return number;
  };
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** -w: optional, since a website API key (df_) names its own website. */
export function withWebsiteRef(command: Command): Command {
  return command.option('-w, --website <website>', 'the website: its id, trackingId (dfid_...) or domain (not needed with a website API key)');
}

export function withRange(command: Command): Command {
  return command
    .option('--start-at <day>', 'the first day (YYYY-MM-DD) or instant (ISO-8601); with --end-at')
    .option('--end-at <day>', 'the last day (included) or instant; with --start-at')
    .option('--timezone <zone>', "an IANA time zone for the days (default: the website's)");
}

export function withFilters(command: Command): Command {
  return command.option('--filter <dim=op:values>', FILTER_HELP, collect);
}

export function withPaging(command: Command, what: string): Command {
  return command
    .option('--limit <n>', `how many ${what} (default 100, at most 1000)`, wholeNumber(1))
    .option('--offset <n>', `skip this many ${what} first`, wholeNumber(0));
}

/** `country=is:US,DE` as `{filter_country: 'is:US,DE'}`; the server checks dimension, operator and values. */
export function filterParams(specs: string[] = []): Record<`filter_${string}`, string> {
  const params: Record<`filter_${string}`, string> = {};
  for (const spec of specs) {
    const equals = spec.indexOf('=');
    const dimension = spec.slice(0, Math.max(equals, 0)).trim().toLowerCase().replace(/^filter_/, '');
    const value = spec.slice(equals + 1).trim();
    if (equals < 0 || !/^[a-z_]+$/.test(dimension) || value === '') {
      usage(`--filter "${spec}": expected <dimension>=[<op>:]<values>, e.g. --filter country=is:US,DE or --filter page=contains:/blog`);
    }
    if (`filter_${dimension}` in params) usage(`--filter ${dimension} given twice: give each dimension once, its values OR-ed with commas (${dimension}=a,b)`);
    params[`filter_${dimension}`] = value;
  }
  return params;
}

/** The website as the website API takes it: a trackingId as is, an id, or a domain looked up. */
export async function websiteRefOf(connection: Connection, website: string): Promise<string> {
  const value = website.trim();
  return /^dfid_/i.test(value) ? value : websiteIdOf(connection, value);
}

/** The query of a website API read from the options the command has; usage errors before any request. */
export async function reportQuery(connection: Connection, options: ReportOptions): Promise<ReportQuery> {
  if ((options.startAt === undefined) !== (options.endAt === undefined)) usage('give --start-at and --end-at together, or neither');
  const filters = filterParams(options.filter);
  const websiteId = options.website !== undefined ? await websiteRefOf(connection, options.website) : undefined;
  return {
    ...(websiteId !== undefined ? { websiteId } : {}),
    ...(options.startAt !== undefined ? { startAt: options.startAt, endAt: options.endAt } : {}),
    ...(options.timezone !== undefined ? { timezone: options.timezone } : {}),
    ...(options.fields !== undefined ? { fields: options.fields } : {}),
    ...(options.limit !== undefined ? { limit: options.limit } : {}),
    ...(options.offset !== undefined ? { offset: options.offset } : {}),
    ...filters,
  };
}

interface Pagination {
  limit: number;
  offset: number;
  total: number;
}

/** "1 visitor", "2 visitors". */
export const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

/** "Rows 1-100 of 250; --offset 100 for the next page." on stderr, when there is more than this page. */
export function sayPage(what: string, shown: number, pagination: Pagination): void {
  const { offset, total } = pagination;
  if (shown === 0 || total <= shown) return;
  const next = offset + shown < total ? `; --offset ${offset + shown} for the next page` : '';
  say(`${what} ${offset + 1}-${offset + shown} of ${total}${next}.`);
}

type Row = Record<string, unknown>;
type Answer = {
  status: 'success';
  data: Row[];
  pagination: Pagination;
};
type Fetch = (client: SightlineClient, query: ReportQuery) => Promise<{ data?: Answer; error?: unknown; response: Response }>;

interface Breakdown {
  description: string;
  fetch: Fetch;
  columns: Array<Column<Row> & { onlyWhenVaried?: boolean }>;
}

/** One breakdown, given its call and then its columns (typed by the call's rows, so a renamed key fails tsc). */
function breakdown<B extends Answer>(
  description: string,
  fetch: (client: SightlineClient, query: ReportQuery) => Promise<{ data?: B; error?: unknown; response: Response }>,
) {
  return (columns: Array<Column<B['data'][number]> & { onlyWhenVaried?: boolean }>): Breakdown => ({
    description,
    fetch,
    columns: columns as Breakdown['columns'],
  });
}

type Counts = { visitors: number; pageviews: number; revenue: number };
const COUNTS: Array<Column<Counts>> = [
  { header: 'visitors', value: (row) => row.visitors },
  { header: 'pageviews', value: (row) => row.pageviews },
  { header: 'revenue', value: (row) => row.revenue },
];
const PAGE: Array<Column<Counts & { hostname: string | null; path: string | null }> & { onlyWhenVaried?: boolean }> = [
  { header: 'hostname', value: (row) => row.hostname, onlyWhenVaried: true },
  { header: 'path', value: (row) => row.path },
  ...COUNTS,
];
const CAMPAIGN_KEYS = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content', 'ref', 'source', 'via'] as const;

/** `utm_campaign=spring utm_source=news`: the parts of a campaign that are set. */
function campaignLabel(campaign: Partial<Record<(typeof CAMPAIGN_KEYS)[number], string | null>> | null): string | null {
  if (!campaign) return null;
  return CAMPAIGN_KEYS.filter((key) => campaign[key]).map((key) => `${key}=${campaign[key]}`).join(' ') || null;
}

const PER = 'visitors, pageviews and revenue per';

const BREAKDOWNS: Record<string, Breakdown> = {
  pages: breakdown(`${PER} page`, (c, query) => c.GET('/api/v1/analytics/pages', { params: { query } }))(PAGE),
  'entry-pages': breakdown(`${PER} entry page (the first of a session)`, (c, query) => c.GET('/api/v1/analytics/entry-pages', { params: { query } }))(PAGE),
  'exit-pages': breakdown(`${PER} exit page (the last of a session)`, (c, query) => c.GET('/api/v1/analytics/exit-pages', { params: { query } }))(PAGE),
  referrers: breakdown(`${PER} referrer (a source such as Google, else the host)`, (c, query) => c.GET('/api/v1/analytics/referrers', { params: { query } }))([
    { header: 'referrer', value: (r) => r.referrer },
    ...COUNTS,
  ]),
  campaigns: breakdown(`${PER} campaign (UTM parameters, ref, source, via)`, (c, query) => c.GET('/api/v1/analytics/campaigns', { params: { query } }))([
    { header: 'campaign', value: (r) => campaignLabel(r.campaign) },
    ...COUNTS,
  ]),
  countries: breakdown(`${PER} country`, (c, query) => c.GET('/api/v1/analytics/countries', { params: { query } }))([
    { header: 'country', value: (r) => r.country },
    { header: 'code', value: (r) => r.countryCode },
    ...COUNTS,
  ]),
  regions: breakdown(`${PER} region`, (c, query) => c.GET('/api/v1/analytics/regions', { params: { query } }))([
    { header: 'region', value: (r) => r.region },
    { header: 'country', value: (r) => r.countryCode },
    ...COUNTS,
  ]),
  cities: breakdown(`${PER} city`, (c, query) => c.GET('/api/v1/analytics/cities', { params: { query } }))([
    { header: 'city', value: (r) => r.city },
    { header: 'country', value: (r) => r.countryCode },
    ...COUNTS,
  ]),
  devices: breakdown(`${PER} device type (desktop, mobile, tablet)`, (c, query) => c.GET('/api/v1/analytics/devices', { params: { query } }))([
    { header: 'device', value: (r) => r.device },
    ...COUNTS,
  ]),
  browsers: breakdown(`${PER} browser`, (c, query) => c.GET('/api/v1/analytics/browsers', { params: { query } }))([
    { header: 'browser', value: (r) => r.browser },
    ...COUNTS,
  ]),
  'operating-systems': breakdown(`${PER} operating system`, (c, query) => c.GET('/api/v1/analytics/operating-systems', { params: { query } }))([
    { header: 'os', value: (r) => r.operating_system },
    ...COUNTS,
  ]),
  hostnames: breakdown(`${PER} hostname`, (c, query) => c.GET('/api/v1/analytics/hostnames', { params: { query } }))([
    { header: 'hostname', value: (r) => r.hostname },
    ...COUNTS,
  ]),
  goals: breakdown('completions, visitors and revenue per goal', (c, query) => c.GET('/api/v1/analytics/goals', { params: { query } }))([
    { header: 'goal', value: (r) => r.goal },
    { header: 'completions', value: (r) => r.completions },
    { header: 'visitors', value: (r) => r.visitors },
    { header: 'revenue', value: (r) => r.revenue },
  ]),
  'exit-clicks': breakdown('clicks and visitors per outbound link', (c, query) => c.GET('/api/v1/analytics/exit-clicks', { params: { query } }))([
    { header: 'url', value: (r) => r.url },
    { header: 'clicks', value: (r) => r.clicks },
    { header: 'visitors', value: (r) => r.visitors },
  ]),
};

/** The columns worth showing: a column marked onlyWhenVaried goes when every row has the same value. */
function shownColumns(columns: Breakdown['columns'], rows: Row[]): Breakdown['columns'] {
  return columns.filter((column) => !column.onlyWhenVaried || new Set(rows.map((row) => column.value(row))).size > 1);
}

/** `sightline analytics <breakdown>` for every breakdown, on the analytics group. */
export function registerBreakdownCommands(analytics: Command): void {
  for (const [name, { description, fetch, columns }] of Object.entries(BREAKDOWNS)) {
    const command = analytics
      .command(name)
      .summary(description.replace(/ \(.*\)$/, ''))
      .description(`${description}, most visitors first`);
    withJson(withPaging(withFilters(withRange(withWebsiteRef(command))), 'rows'), '{"data": [rows], "pagination": {limit, offset, total}}').action(
      action(async (options: ReportOptions) => {
        const connection = connect();
        const query = await reportQuery(connection, options);
        const body = await call(fetch(connection.client, query), connection.settings.baseUrl);
        emit(options, body, () => {
          printTable(body.data, shownColumns(columns, body.data), 'No data.');
          sayPage('Rows', body.data.length, body.pagination);
        });
      }),
    );
  }
}
