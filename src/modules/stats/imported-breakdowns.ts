import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { Breakdown } from '../analytics/breakdowns.ts';
import type { BreakdownRow, RowsPage } from './event-store.ts';
import { type ImportedUse, hasImportedData } from './imported-reads.ts';
import { type Dimension, type Filter, PATH_DIMENSIONS, isSubstringFilter } from './stats.filters.ts';
import type { PageRequest, StatsScope } from './stats.params.ts';

// The breakdowns that have an imported table (Plausible's imported_pages, imported_sources, ...):
// the table's rows of the read's days, grouped under the breakdown's keys, added to the native
// rows before sorting and paging. As Plausible does, a filter may be kept when it is on the
// dimension the table holds (a page filter on pages); any other filter leaves imported data out.
// Cities (Plausible exports GeoNames ids, not names) and hostnames have no imported table here.

/** Native rows read to merge with: the merged ranking considers the first this many. */
export const MERGE_NATIVE_ROWS = 10_000;
/** Imported groups read per breakdown, most visitors first. */
const MAX_IMPORTED_ROWS = 10_000;

interface ImportedSource {
  table: keyof Database & `imported_${string}`;
  /** Columns grouped by. */
  columns: string[];
  /** The breakdown's keys from the grouped columns; the website's domain stands for a hostname the table lacks. */
  keys(row: Record<string, string>, domain: string): Record<string, string | null>;
  pageviews?: string;
  count?: string;
  /** Extra condition on the table's rows. */
  where?: RawBuilder<unknown>;
  /** Filters on these dimensions can be answered from the table. */
  dimensions: Dimension[];
}

const text = (value: string | undefined): string | null => (value === undefined || value === '' ? null : value);
const DIRECT = new Set(['', 'Direct / None', '(none)']);

const SOURCES: Partial<Record<Breakdown, ImportedSource>> = {
  pages: {
    table: 'imported_pages',
    columns: ['hostname', 'page'],
    keys: (row, domain) => ({ hostname: text(row.hostname) ?? domain, path: text(row.page) }),
    pageviews: 'pageviews',
    dimensions: ['page'],
  },
  'entry-pages': {
    table: 'imported_entry_pages',
    columns: ['entry_page'],
    keys: (row, domain) => ({ hostname: domain, path: text(row.entry_page) }),
    pageviews: 'pageviews',
    dimensions: ['entry_page'],
  },
  'exit-pages': {
    table: 'imported_exit_pages',
    columns: ['exit_page'],
    keys: (row, domain) => ({ hostname: domain, path: text(row.exit_page) }),
    pageviews: 'pageviews',
    dimensions: [],
  },
  referrers: {
    table: 'imported_sources',
    columns: ['source'],
    keys: (row) => ({ referrer: DIRECT.has(row.source ?? '') ? null : row.source! }),
    pageviews: 'pageviews',
    dimensions: ['referrer'],
  },
  campaigns: {
    table: 'imported_sources',
    columns: ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'],
    keys: (row) => ({
      utm_source: text(row.utm_source),
      utm_medium: text(row.utm_medium),
      utm_campaign: text(row.utm_campaign),
      utm_term: text(row.utm_term),
      utm_content: text(row.utm_content),
      ref: null,
      source: null,
      via: null,
    }),
    pageviews: 'pageviews',
    dimensions: ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'],
  },
  countries: { table: 'imported_locations', columns: ['country'], keys: (row) => ({ countryCode: text(row.country) }), pageviews: 'pageviews', dimensions: ['country'] },
  regions: {
    table: 'imported_locations',
    columns: ['region', 'country'],
    keys: (row) => ({ region: text(row.region), countryCode: text(row.country) }),
    pageviews: 'pageviews',
    dimensions: ['region'],
  },
  devices: { table: 'imported_devices', columns: ['device'], keys: (row) => ({ device: text(row.device?.toLowerCase()) }), pageviews: 'pageviews', dimensions: ['device'] },
  browsers: { table: 'imported_browsers', columns: ['browser'], keys: (row) => ({ browser: text(row.browser) }), pageviews: 'pageviews', dimensions: ['browser'] },
  'operating-systems': {
    table: 'imported_operating_systems',
    columns: ['operating_system'],
    keys: (row) => ({ operating_system: text(row.operating_system) }),
    pageviews: 'pageviews',
    dimensions: ['os'],
  },
  goals: { table: 'imported_custom_events', columns: ['name'], keys: (row) => ({ goal: text(row.name) }), count: 'events', dimensions: ['goal'] },
  'exit-clicks': {
    table: 'imported_custom_events',
    columns: ['link_url'],
    keys: (row) => ({ url: text(row.link_url) }),
    count: 'events',
    where: sql`t.name = 'Outbound Link: Click' and t.link_url <> ''`,
    dimensions: [],
  },
};

/** The dimension value of an imported row's keys that a filter on `dimension` looks at. */
function valueOf(dimension: Dimension, keys: Record<string, string | null>): string | null {
  switch (dimension) {
    case 'page':
    case 'entry_page':
      return keys.path ?? null;
    case 'country':
      return keys.countryCode ?? null;
    case 'os':
      return keys.operating_system ?? null;
    default:
      return keys[dimension] ?? null;
  }
}

function wildcard(pattern: string): RegExp {
  return new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
}

/** Whether an imported row passes a filter on its own dimension. */
export function passes(filter: Filter, keys: Record<string, string | null>): boolean {
  const value = valueOf(filter.dimension, keys);
  if (isSubstringFilter(filter)) {
    const lower = (value ?? '').toLowerCase();
    const hit = filter.values.some((part) => lower.includes(part.toLowerCase())) || (filter.alsoIs ?? []).includes(value ?? '');
    return filter.operator === 'contains' ? hit : !hit;
  }
  const path = PATH_DIMENSIONS.includes(filter.dimension);
  const hit = filter.values.some((wanted) => (path && wanted.includes('*') ? wildcard(wanted).test(value ?? '') : wanted === value));
  return filter.operator === 'is' ? hit : !hit;
}

async function importedGroups(db: Kysely<Database>, source: ImportedSource, scope: StatsScope, domain: string): Promise<BreakdownRow[]> {
  const span = scope.wholeDays!;
  const columns = source.columns.map((column) => sql.ref(`t.${column}`));
  const days = span === 'all' ? sql`` : sql`and t.day >= ${span.first} and t.day <= ${span.last}`;
  const extra = source.where ? sql`and ${source.where}` : sql``;
  const pageviews = source.pageviews ? sql`sum(${sql.ref(`t.${source.pageviews}`)})` : sql`0`;
  const count = source.count ? sql`sum(${sql.ref(`t.${source.count}`)})` : sql`0`;
  const { rows } = await sql<Record<string, string>>`
    select ${sql.join(columns)}, sum(t.visitors) as visitors, ${pageviews} as pageviews, ${count} as count
    from ${sql.table(source.table)} t
    where t.website_id = ${scope.websiteId} ${days} ${extra}
      and exists (select 1 from imports i where i.id = t.import_id and i.status = 'done')
    group by ${sql.join(columns)}
    order by sum(t.visitors) desc
    limit ${MAX_IMPORTED_ROWS}`.execute(db);
  const grouped = new Map<string, BreakdownRow>();
  for (const row of rows) {
    const keys = source.keys(row, domain);
    if (!scope.filters.every((filter) => passes(filter, keys))) continue;
    const id = JSON.stringify(keys);
    const found = grouped.get(id) ?? { keys, visitors: 0, pageviews: 0, count: 0, revenueMinor: 0 };
    found.visitors += Number(row.visitors);
    found.pageviews += Number(row.pageviews);
    found.count += Number(row.count);
    grouped.set(id, found);
  }
  return [...grouped.values()];
}

const byRank = (a: BreakdownRow, b: BreakdownRow) =>
  b.visitors - a.visitors || b.count - a.count || b.pageviews - a.pageviews || JSON.stringify(a.keys).localeCompare(JSON.stringify(b.keys));

/** When the breakdown may merge imported rows: its table, or why not (undefined: the website has none). */
export async function importedBreakdownUse(db: Kysely<Database>, kind: Breakdown, scope: StatsScope): Promise<ImportedUse | undefined> {
  if (!(await hasImportedData(db, scope.websiteId))) return undefined;
  const source = SOURCES[kind];
  if (!source) return 'left-out: breakdown';
  if (!scope.wholeDays) return 'left-out: range';
  if (!scope.filters.every((filter) => source.dimensions.includes(filter.dimension))) return 'left-out: filters';
  return 'included';
}

/**
 * The breakdown with the imported rows of its days: the native rows (the first MERGE_NATIVE_ROWS)
 * and the imported groups summed by key, ranked by visitors, then paged.
 */
export async function mergeImportedBreakdown(
  db: Kysely<Database>,
  kind: Breakdown,
  scope: StatsScope,
  page: PageRequest,
  domain: string,
  native: (page: PageRequest) => Promise<RowsPage<BreakdownRow>>,
): Promise<RowsPage<BreakdownRow>> {
  const imported = await importedGroups(db, SOURCES[kind]!, scope, domain);
  if (imported.length === 0) return native(page);
  const all = await native({ limit: MERGE_NATIVE_ROWS, offset: 0 });
  const merged = new Map<string, BreakdownRow>();
  for (const row of [...all.rows, ...imported]) {
    const id = JSON.stringify(Object.fromEntries(Object.entries(row.keys).sort(([a], [b]) => a.localeCompare(b))));
    const found = merged.get(id);
    if (!found) merged.set(id, { ...row, keys: { ...row.keys } });
    else {
      found.visitors += row.visitors;
      found.pageviews += row.pageviews;
      found.count += row.count;
      found.revenueMinor += row.revenueMinor;
    }
  }
  const rows = [...merged.values()].sort(byRank);
  const beyond = Math.max(0, all.total - all.rows.length);
  return { rows: rows.slice(page.offset, page.offset + page.limit), total: rows.length + beyond };
}
