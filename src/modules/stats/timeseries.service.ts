import type { Kysely } from 'kysely';
import { DateTime } from 'luxon';
import type { Database } from '../../db/schema.ts';
import { invalidField, notFound } from '../../errors.ts';
import { parseFilters } from './stats.filters.ts';
import type { EventStore } from './event-store.ts';
import { type StatsScope, ignoredParams, parseFieldNames, timezoneParam } from './stats.params.ts';
import { presentTimeseries, type SeriesCounts } from './timeseries.presenter.ts';
import * as repo from './timeseries.repository.ts';
import type { TrafficCounts } from './sql/series-sql.ts';
import { METRICS, type Metric, type TimeseriesQueryInput, type TimeseriesView } from './timeseries.schemas.ts';
import { type ReadShape, answerRead } from './read-planner.ts';
import type { RangeShape } from '../analytics/derived-tables.ts';
import { type Bucket, type Interval, type ZonedRange, bucketCountBound, buckets, startOfLocalDay } from '../analytics/zoned-time.ts';
import { moneyRulesOf } from './money-rules.ts';
import { type ImportedUse, mergeImportedSeries } from './imported-reads.ts';

// GET /api/v1/analytics/timeseries. Day, week and month series of the website's own time zone
// read the day rollups (daily_totals for a day's counts, visitor_recency for distinct visitors
// over several days); hour series, and any series asked in another time zone, count the raw
// events. Revenue always comes from the payments table.

export const MAX_BUCKETS = 1500;
/** Buckets per answer when the client pages (website-api.md: lists take at most 1000). */
const MAX_PAGE = 1000;
const TOTAL = -1;
/** How far from the clock a read's `now` may be and still be a read of now (routes pass their request's instant). */
const LIVE_READ_MS = 10_000;

/** How far before its arrival a read's range may end and still be a read up to now. */
export const LIVE_END_MS = 1_000;

/**
 * The instant from which events are not part of a series (hour-reads' `asOf`). A read of now (its
 * `now`, its arrival, the clock's give or take a queue) takes its current hour up to the read: the
 * events recorded since it arrived belong to it, so its last hour is its hour_totals row as it
 * stands. A range the client ended at its own "now" (at most LIVE_END_MS before the arrival: the
 * way to the server) is such a read too: it may count the events of those moments, as a read
 * without a range does, rather than read its hour's raw events whenever one arrived meanwhile
 * (under steady traffic always, and an hour of them by the hour's end: the soak's knee). A read of
 * another moment, or of a range ending earlier, is exact to its end.
 */
export function seriesAsOf(rangeEnd: number, now: number): number {
  if (Math.abs(Date.now() - now) >= LIVE_READ_MS) return Date.now();
  return rangeEnd >= now - LIVE_END_MS && rangeEnd <= now + 1 ? rangeEnd : now + 1;
}

/** The series' metrics; every bucket carries its name, so asking for `name` changes nothing. */
export function parseFields(raw: string): Metric[] {
  return parseFieldNames(raw, METRICS, ['name']);
}

type Bound = { day: DateTime } | { instant: DateTime };

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)?$/;
const BOUND_RULE = 'must be a YYYY-MM-DD day or an ISO-8601 date-time such as 2026-03-08T14:00:00Z';

// Both engines store these years; PostgreSQL refuses year 0 and years past 9999.
const inYears = (at: DateTime) => at.year >= 1970 && at.year < 9999;

function parseBound(field: string, value: string, timezone: string): Bound {
  if (DAY.test(value)) {
    const day = startOfLocalDay(value, timezone);
    if (day && inYears(day)) return { day };
  } else if (DATE_TIME.test(value)) {
    const instant = DateTime.fromISO(value, { zone: timezone });
    if (instant.isValid && inYears(instant)) return { instant };
  }
  throw invalidField(field, `${BOUND_RULE}, between 1970 and 9998`);
}

function localDayStart(bound: Bound): DateTime {
  return 'day' in bound ? bound.day : bound.instant.startOf('day');
}

/**
 * The range [start, end) a query covers. Day, week and month series count whole local days (an
 * instant stands for its day); hour series count instants (endAt included).
 */
export function resolveRange(query: TimeseriesQueryInput, interval: Interval, timezone: string, now: Date): ZonedRange {
  if ((query.startAt === undefined) !== (query.endAt === undefined)) {
    const missing = query.startAt === undefined ? 'startAt' : 'endAt';
    throw invalidField(`query.${missing}`, 'is required when the other end of the range is given (send both or neither)');
  }
  if (query.startAt === undefined || query.endAt === undefined) return defaultRange(interval, timezone, now);
  const first = parseBound('query.startAt', query.startAt, timezone);
  const last = parseBound('query.endAt', query.endAt, timezone);
  let range: ZonedRange;
  if (interval === 'hour') {
    range = {
      start: 'day' in first ? first.day : first.instant,
      end: 'day' in last ? last.day.plus({ days: 1 }).startOf('day') : last.instant.plus({ milliseconds: 1 }),
    };
  } else {
    range = { start: localDayStart(first), end: localDayStart(last).plus({ days: 1 }).startOf('day') };
  }
  if (range.end.toMillis() <= range.start.toMillis()) throw invalidField('query.endAt', 'must not be before startAt');
  return range;
}

function defaultRange(interval: Interval, timezone: string, now: Date): ZonedRange {
  const local = DateTime.fromJSDate(now, { zone: timezone });
  if (interval === 'hour') return { start: local.startOf('hour').minus({ hours: 23 }), end: local.plus({ milliseconds: 1 }) };
  const end = local.startOf('day').plus({ days: 1 }).startOf('day');
  if (interval === 'month') return { start: local.startOf('month').minus({ months: 11 }).startOf('month'), end };
  return { start: local.startOf('day').minus({ days: 29 }).startOf('day'), end };
}

function seriesBuckets(range: ZonedRange, interval: Interval): Bucket[] {
  const tooMany = () =>
    invalidField('query.endAt', `the range holds more than ${MAX_BUCKETS} ${interval} buckets; narrow it or use a longer interval`);
  if (bucketCountBound(range, interval) > 2 * MAX_BUCKETS) throw tooMany();
  const list = buckets(range, interval);
  if (list.length > MAX_BUCKETS) throw tooMany();
  return list;
}

const TRAFFIC: Metric[] = ['visitors', 'sessions', 'pageviews', 'conversion_rate'];
const DISTINCT: Metric[] = ['visitors', 'conversion_rate'];

const SERIES_PARAMS = ['fields', 'interval', 'startAt', 'endAt', 'timezone', 'limit', 'offset', 'exact'];

/** Query names the series does not use (answered in X-Sightline-Ignored-Params). */
export function ignoredSeriesParams(query: Record<string, unknown>): string[] {
  return ignoredParams(query, SERIES_PARAMS, true);
}

/** The website record comes from `db`; every count from the event store. */
export interface SeriesDeps {
  db: Kysely<Database>;
  store: EventStore;
}

/** What an answer's headers say besides its body: set when the read used the raw events because the day rollups move. */
export interface SeriesNotes {
  rebuilding: boolean;
  /** What the series did with imported data (absent: the website has none). */
  imported?: ImportedUse;
  /** The rate of the sample its traffic was counted from (absent when exact): X-Sightline-Sample-Rate. */
  sampleRate?: number;
}

export async function timeseries(deps: SeriesDeps, websiteId: string, query: TimeseriesQueryInput, now = new Date(), notes?: SeriesNotes): Promise<TimeseriesView> {
  const { store } = deps;
  const website = await repo.findWebsiteSettings(deps.db, websiteId);
  if (!website) throw notFound('Website not found');
  const fields = parseFields(query.fields);
  const filters = parseFilters(query);
  const interval = query.interval as Interval;
  const timezone = timezoneParam(query.timezone, website.timezone);
  const range = resolveRange(query, interval, timezone, now);
  const list = seriesBuckets(range, interval);
  const whole: Bucket = { ...list[0]!, end: list.at(-1)!.end, lastDay: list.at(-1)!.lastDay };

  // Filters read the raw events; the scope's range (the whole series) bounds a goal filter.
  const scope = { websiteId, timezone, filters, range: { from: whole.start, to: whole.end }, exact: query.exact === true };

  const counts: SeriesCounts = { traffic: null, money: null };
  const wants = (metrics: Metric[]) => fields.some((field) => metrics.includes(field));
  if (wants(TRAFFIC)) {
    // While the day rollups move to a new zone (day-relocation.ts) the raw events answer.
    if (website.relocating && notes) notes.rebuilding = true;
    // Days, weeks and months of the website's own zone are whole local days, hours on whole UTC
    // hours are whole hours: the planner may send them to the day or hour rollups.
    const shape: ReadShape = { range: rangeShape(list, interval, timezone === website.timezone), filters: filters.length === 0 ? 'none' : 'any' };
    const state = website.building ? 'building' : website.relocating ? 'moving' : 'ready';
    const spans = list.map((bucket, id) => ({ id, from: bucket.start, to: bucket.end }));
    const asOf = seriesAsOf(range.end.toMillis(), now.getTime());
    counts.traffic = await answerRead('series', shape, state, {
      daily_totals: () => rollupTraffic(store, websiteId, list, whole, interval, wants(DISTINCT)),
      hour_totals: () => store.hourTraffic(websiteId, spans, wants(DISTINCT), asOf),
      events: () => eventTraffic(store, scope, list, whole, wants(DISTINCT)),
    });
    const use = { interval, ownZone: timezone === website.timezone, filtered: filters.length > 0 };
    const imported = await mergeImportedSeries(deps.db, websiteId, use, list, counts.traffic);
    if (notes && imported) notes.imported = imported;
  }
  if (wants(['revenue', 'payments'])) {
    const spans = list.map((bucket, id) => ({ id, from: bucket.start, to: bucket.end }));
    const rules = await moneyRulesOf(deps.db, websiteId, website);
    counts.money = await store.spanPayments(scope, spans, rules);
  }
  const page = { limit: query.limit === undefined ? list.length : Math.min(query.limit, MAX_PAGE), offset: query.offset ?? 0 };
  const view = presentTimeseries({ fields, page, interval, timezone, currency: website.currency, buckets: list, counts });
  const sampleRate = counts.traffic?.sampleRate;
  if (sampleRate === undefined) return view;
  if (notes) notes.sampleRate = sampleRate;
  return { ...view, sampling: { rate: sampleRate } };
}

/**
 * The series' range as the planner sees it: whole local days (days, weeks, months in the
 * website's zone); whole hours (hour buckets that start and end on UTC hours, but for the range's
 * first start and last end: any zone whose offset is whole hours); else instants (a zone with a
 * half-hour or 45-minute offset, days of another zone).
 */
function rangeShape(list: Bucket[], interval: Interval, ownZone: boolean): RangeShape {
  if (interval !== 'hour') return ownZone ? 'whole-days' : 'instants';
  const onHour = (iso: string) => Date.parse(iso) % 3_600_000 === 0;
  return list.every((bucket, i) => (i === 0 || onHour(bucket.start)) && (i === list.length - 1 || onHour(bucket.end))) ? 'whole-hours' : 'instants';
}

async function eventTraffic(store: EventStore, scope: StatsScope, list: Bucket[], whole: Bucket, distinct: boolean) {
  const spans = list.map((bucket, id) => ({ id, from: bucket.start, to: bucket.end }));
  if (distinct) spans.push({ id: TOTAL, from: whole.start, to: whole.end });
  const found = await store.spanTraffic(scope, spans);
  const total = found.get(TOTAL);
  return { perBucket: found, totalVisitors: total?.visitors ?? 0, totalConverted: total?.converted ?? 0, sampleRate: found.sampleRate };
}

async function rollupTraffic(store: EventStore, websiteId: string, list: Bucket[], whole: Bucket, interval: Interval, distinct: boolean) {
  const days = await store.dailyTotals(websiteId, whole.firstDay, whole.lastDay);
  const perBucket = new Map<number, TrafficCounts>();
  let index = 0;
  for (const row of days.sort((a, b) => (a.day < b.day ? -1 : 1))) {
    while (index < list.length && list[index]!.lastDay < row.day) index += 1;
    const bucket = list[index];
    if (!bucket || row.day < bucket.firstDay) continue;
    const counts = perBucket.get(index) ?? { visitors: 0, sessions: 0, pageviews: 0, converted: 0 };
    counts.sessions += Number(row.sessions);
    counts.pageviews += Number(row.pageviews);
    // A day's rows hold each visitor once; longer buckets get distinct counts below.
    counts.visitors += Number(row.visitors);
    counts.converted += Number(row.converted_visitors);
    perBucket.set(index, counts);
  }
  if (!distinct) return { perBucket, totalVisitors: 0, totalConverted: 0 };

  const spans = interval === 'day' ? [] : list.map((bucket, id) => ({ id, from: bucket.firstDay, to: bucket.lastDay }));
  spans.push({ id: TOTAL, from: whole.firstDay, to: whole.lastDay });
  const found = await store.spanDistinctVisitors(websiteId, spans);
  if (interval !== 'day') {
    for (const [id, counts] of perBucket) {
      counts.visitors = found.get(id)?.visitors ?? 0;
      counts.converted = found.get(id)?.converted ?? 0;
    }
  }
  const total = found.get(TOTAL);
  return { perBucket, totalVisitors: total?.visitors ?? 0, totalConverted: total?.converted ?? 0 };
}
