import { BREAKDOWNS } from '../analytics/breakdowns.ts';
import { MAX_LIMIT } from '../stats/stats.params.ts';
import { FILTER_PARAMS } from '../stats/stats.filters.ts';
import * as stats from '../stats/stats.service.ts';
import { METRICS } from '../stats/timeseries.schemas.ts';
import * as series from '../stats/timeseries.service.ts';
import { toCsv } from './csv.ts';
import type { ZipEntry } from './zip-stream.ts';

// Every report of a period as CSV (issue 37 item 2): each file is the answer of the route of the
// same name for the same period and filters, read through the same service, so the numbers are
// the API's. Breakdowns are read page by page (1000 rows a read) up to MAX_ROWS_PER_REPORT.

export const MAX_ROWS_PER_REPORT = 50_000;

/** The query the export passes on to each report: the period, its zone and the filters. */
export interface ReportQuery {
  startAt: string;
  endAt: string;
  timezone?: string;
  interval?: string;
  [filter: string]: unknown;
}

export interface ReportDeps extends stats.StatsDeps {
  /** Runs one analytics read within the server's concurrency limit. */
  run<T>(read: () => Promise<T>): Promise<T>;
}

/** The period and filters only (websiteId and the export's own names are not the reports'). */
export function reportQuery(query: ReportQuery): Record<string, unknown> {
  const picked: Record<string, unknown> = { startAt: query.startAt, endAt: query.endAt };
  if (query.timezone !== undefined) picked.timezone = query.timezone;
  for (const [name, value] of Object.entries(query)) if (FILTER_PARAMS.includes(name) || name.startsWith('filter_')) picked[name] = value;
  return picked;
}

export async function overviewFile(deps: ReportDeps, websiteId: string, query: Record<string, unknown>): Promise<ZipEntry> {
  const answer = await deps.run(() => stats.overview(deps, websiteId, query));
  return { name: 'overview.csv', text: toCsv(answer.body.data as Array<Record<string, unknown>>) };
}

export async function timeseriesFile(deps: ReportDeps, websiteId: string, query: Record<string, unknown>, interval: string): Promise<ZipEntry> {
  const seriesQuery = { ...query, fields: METRICS.join(','), interval } as unknown as Parameters<typeof series.timeseries>[2];
  const answer = await deps.run(() => series.timeseries(deps, websiteId, seriesQuery));
  return { name: 'timeseries.csv', text: toCsv(answer.data as Array<Record<string, unknown>>, ['name', 'timestamp']) };
}

export async function breakdownFile(deps: ReportDeps, websiteId: string, query: Record<string, unknown>, kind: (typeof BREAKDOWNS)[number]): Promise<ZipEntry> {
  const rows: Array<Record<string, unknown>> = [];
  for (let offset = 0; offset < MAX_ROWS_PER_REPORT; offset += MAX_LIMIT) {
    const answer = await deps.run(() => stats.breakdown(deps, kind, websiteId, { ...query, limit: MAX_LIMIT, offset }));
    rows.push(...(answer.body.data as Array<Record<string, unknown>>));
    if (offset + MAX_LIMIT >= answer.body.pagination.total) break;
  }
  return { name: `${kind}.csv`, text: toCsv(rows) };
}

/**
 * The files after the overview, read one at a time as the zip is written. The overview (and the
 * time series) are read first by the caller, so a bad parameter is a 400 before anything is sent.
 */
export async function* remainingFiles(
  deps: ReportDeps,
  websiteId: string,
  query: Record<string, unknown>,
  interval: string,
  options: { skipTimeseries?: boolean } = {},
): AsyncGenerator<ZipEntry> {
  if (!options.skipTimeseries) yield await timeseriesFile(deps, websiteId, query, interval);
  for (const kind of BREAKDOWNS) yield await breakdownFile(deps, websiteId, query, kind);
}
