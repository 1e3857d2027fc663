import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { notFound } from '../../errors.ts';
import { presentPagination } from '../../http/schemas.ts';
import { findFunnel } from '../funnels/funnels.repository.ts';
import type { EventStore, MoneyRules } from './event-store.ts';
import type { Breakdown } from '../analytics/breakdowns.ts';
import {
  presentBreakdownRow,
  presentFunnelReport,
  presentOverview,
  presentRealtimeMap,
  presentVisitor,
  presentVisitorListItem,
  presentVisitorPagination,
} from './stats.presenter.ts';
import { type CommonParam, type ParsedParams, parseCommonParams, parseFieldNames } from './stats.params.ts';
import { findVisitorProfile } from '../identify/identify.repository.ts';
import { type StatsWebsite, findWebsiteForStats } from './stats.repository.ts';
import { VISITOR_LIST_PARAMS, parseVisitorListQuery } from './visitor-list.params.ts';
import { moneyRulesOf } from './money-rules.ts';
import { mergeImportedOverview } from './imported-reads.ts';
import { importedBreakdownUse, mergeImportedBreakdown } from './imported-breakdowns.ts';

// The website API's reads (website-api.md section 3): parse the common parameters, ask the
// event store, shape the answer. Every read names the parameters it did not use.

export interface StatsDeps {
  db: Kysely<Database>;
  store: EventStore;
  /** PUBLIC_URL, for the absolute links in answers (the countries' flags). */
  publicUrl: string;
  now?: () => Date;
}

const REALTIME_MINUTES = 5;
const MAP_MINUTES = 10;
const FUNNEL_DEFAULT_DAYS = 30;
const META_FIELDS = ['domain', 'name', 'timezone', 'currency', 'kpi', 'kpiColorScheme', 'logo'] as const;

type Query = Record<string, unknown>;

async function websiteOf(deps: StatsDeps, websiteId: string): Promise<StatsWebsite> {
  const website = await findWebsiteForStats(deps.db, websiteId);
  if (!website) throw notFound('Website not found');
  return website;
}

function moneyOf(deps: StatsDeps, website: StatsWebsite): Promise<MoneyRules> {
  return moneyRulesOf(deps.db, website.id, website);
}

async function prepare(deps: StatsDeps, websiteId: string, query: Query, uses: CommonParam[], extra: string[] = []) {
  const website = await websiteOf(deps, websiteId);
  const params: ParsedParams = parseCommonParams(query, website, uses, extra);
  return { website, params };
}

/** The item with only the `fields` asked for; all of it when none are. */
function pickFields<T extends Record<string, unknown>>(item: T, raw: unknown, allowed: readonly string[]): Partial<T> {
  if (raw === undefined) return item;
  const names: string[] = parseFieldNames(String(raw), allowed);
  return Object.fromEntries(Object.entries(item).filter(([key]) => names.includes(key))) as Partial<T>;
}

/** `exact=true` (a boolean once the route's schema has read it). */
const exactOf = (query: Query): boolean => query.exact === true || query.exact === 'true';

/** The answer's `sampling` sibling, only when the counts come from a sample. */
const samplingOf = (rate: number | undefined) => (rate === undefined ? {} : { sampling: { rate } });

export async function overview(deps: StatsDeps, websiteId: string, query: Query) {
  const { website, params } = await prepare(deps, websiteId, query, ['range', 'timezone', 'filters', 'fields'], ['exact']);
  const scope = { ...params.scope, exact: exactOf(query) };
  const counts = await deps.store.overview(scope, await moneyOf(deps, website));
  const imported = await mergeImportedOverview(deps.db, scope, counts);
  const item = presentOverview(counts, website.currency);
  return {
    body: { status: 'success' as const, data: [pickFields(item, query.fields, Object.keys(item))], ...samplingOf(counts.sampleRate) },
    ignored: params.ignored,
    rebuilding: params.rebuilding,
    imported,
    sampleRate: counts.sampleRate,
  };
}

export async function breakdown(deps: StatsDeps, kind: Breakdown, websiteId: string, query: Query) {
  const { website, params } = await prepare(deps, websiteId, query, ['range', 'timezone', 'filters', 'page'], ['exact']);
  const scope = { ...params.scope, exact: exactOf(query) };
  const money = await moneyOf(deps, website);
  let sampleRate: number | undefined;
  const native = async (page: typeof params.page) => {
    const rows = await deps.store.breakdown(kind, scope, page, money);
    sampleRate = rows.sampleRate;
    return rows;
  };
  const imported = await importedBreakdownUse(deps.db, kind, scope);
  const found = imported === 'included' ? await mergeImportedBreakdown(deps.db, kind, scope, params.page, website.domain, native) : await native(params.page);
  return {
    body: {
      status: 'success' as const,
      data: found.rows.map((row) => presentBreakdownRow(kind, row, website.currency, deps.publicUrl)),
      pagination: presentPagination(params.page, found.total),
      ...samplingOf(sampleRate),
    },
    ignored: params.ignored,
    rebuilding: params.rebuilding,
    imported,
    sampleRate,
  };
}

export async function goalProperties(deps: StatsDeps, websiteId: string, query: Query) {
  const { params } = await prepare(deps, websiteId, query, ['range', 'timezone', 'filters', 'page'], ['eventName', 'propertyName']);
  const eventName = String(query.eventName);
  const propertyName = query.propertyName === undefined ? null : String(query.propertyName);
  const found = await deps.store.goalProperties(params.scope, eventName, propertyName, params.page);
  return {
    body: { status: 'success' as const, data: found.rows, pagination: presentPagination(params.page, found.total) },
    ignored: params.ignored,
  };
}

const nowOf = (deps: StatsDeps): Date => deps.now?.() ?? new Date();

function minutesAgo(deps: StatsDeps, minutes: number): string {
  return new Date(nowOf(deps).getTime() - minutes * 60_000).toISOString();
}

export async function realtime(deps: StatsDeps, websiteId: string, query: Query) {
  const { params } = await prepare(deps, websiteId, query, []);
  const visitors = await deps.store.liveVisitors(websiteId, minutesAgo(deps, REALTIME_MINUTES), params.scope.derivedState ?? 'ready');
  return { body: { status: 'success' as const, data: [{ visitors }] }, ignored: params.ignored };
}

export async function realtimeMap(deps: StatsDeps, websiteId: string, query: Query) {
  const { params } = await prepare(deps, websiteId, query, []);
  const live = await deps.store.liveMap(websiteId, minutesAgo(deps, MAP_MINUTES), params.scope.derivedState ?? 'ready');
  return { body: { status: 'success' as const, data: presentRealtimeMap(live) }, ignored: params.ignored };
}

export async function metadata(deps: StatsDeps, websiteId: string, query: Query) {
  const { website, params } = await prepare(deps, websiteId, query, ['fields']);
  const item = {
    domain: website.domain,
    name: website.name,
    timezone: website.timezone,
    currency: website.currency,
    kpi: website.kpi,
    kpiColorScheme: website.kpi_color_scheme,
    logo: null,
  };
  return { body: { status: 'success' as const, data: [pickFields(item, query.fields, META_FIELDS)] }, ignored: params.ignored };
}

export async function funnelReport(deps: StatsDeps, websiteId: string, funnelId: string, query: Query) {
  const funnel = await findFunnel(deps.db, websiteId, funnelId);
  if (!funnel || !funnel.is_active) throw notFound('Funnel not found');
  const { website, params } = await prepare(deps, websiteId, query, ['range', 'timezone', 'filters'], ['exact']);
  const scope = {
    ...(params.scope.range ? params.scope : { ...params.scope, range: { from: minutesAgo(deps, FUNNEL_DEFAULT_DAYS * 24 * 60), to: minutesAgo(deps, -1) } }),
    exact: exactOf(query),
  };
  const counts = await deps.store.funnel(scope, funnel.steps, await moneyOf(deps, website));
  return {
    body: { status: 'success' as const, data: [presentFunnelReport(funnel, counts, website.currency)], ...samplingOf(counts.sampleRate) },
    ignored: params.ignored,
    sampleRate: counts.sampleRate,
  };
}

export async function visitor(deps: StatsDeps, websiteId: string, visitorId: string, query: Query) {
  const { params } = await prepare(deps, websiteId, query, []);
  const found = await deps.store.visitor(websiteId, visitorId);
  if (!found) throw notFound('Visitor not found: this visitor has no event on this website');
  const profile = await findVisitorProfile(deps.db, websiteId, visitorId);
  return { body: { status: 'success' as const, data: presentVisitor(found, profile, nowOf(deps)) }, ignored: params.ignored };
}

export async function visitors(deps: StatsDeps, websiteId: string, query: Query) {
  const { options, common } = parseVisitorListQuery(query);
  const { params } = await prepare(deps, websiteId, common, ['range', 'timezone', 'filters', 'page'], [...VISITOR_LIST_PARAMS, 'exact']);
  const found = await deps.store.visitors({ ...params.scope, exact: exactOf(query) }, options, params.page);
  return {
    body: {
      status: 'success' as const,
      data: found.rows.map(presentVisitorListItem),
      pagination: presentVisitorPagination(params.page, found.total, found.rows.length, found.hasMore),
      ...samplingOf(found.sampleRate),
    },
    ignored: params.ignored,
    sampleRate: found.sampleRate,
  };
}
