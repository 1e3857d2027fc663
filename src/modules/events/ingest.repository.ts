import type { Kysely } from 'kysely';
import { isPostgres } from '../../db/engine.ts';
import { prepareListQuery, prepareQuery } from '../../db/prepared.ts';
import type { Database } from '../../db/schema.ts';
import { isId } from '../../lib/ids.ts';
import { type WebsiteFilters, compileFilters } from './ingest.filters.ts';

export interface IngestWebsite {
  id: string;
  isCookieless: boolean;
  filters: WebsiteFilters;
}

const list = (json: string): string[] => JSON.parse(json) as string[];

const COLUMNS = ['id', 'tracking_id', 'domain', 'is_cookieless', 'allowed_hostnames', 'excluded_hostnames', 'excluded_paths', 'excluded_ips', 'excluded_countries'] as const;
const select = (db: Kysely<Database>) => db.selectFrom('websites').select(COLUMNS);

const byId = prepareQuery((db, id: string) => select(db).where('id', '=', id));
const byTrackingId = prepareQuery((db, trackingId: string) => select(db).where('tracking_id', '=', trackingId));
const byIds = prepareListQuery(1, (db, ids: [string][]) => select(db).where('id', 'in', ids.map(([id]) => id)));
const byTrackingIds = prepareListQuery(1, (db, ids: [string][]) => select(db).where('tracking_id', 'in', ids.map(([id]) => id)));

type SettingsRow = NonNullable<Awaited<ReturnType<typeof byId.first>>>;

// The compiled filters, by the exact settings they were compiled from: a changed setting is a
// new key, so the row read on every event decides, and nothing can be stale. Bounded, oldest
// entry out first.
const FILTERS_KEPT = 1000;
const compiled = new Map<string, WebsiteFilters>();

function filtersOf(row: SettingsRow): WebsiteFilters {
  const key = [row.domain, row.allowed_hostnames, row.excluded_hostnames, row.excluded_paths, row.excluded_ips, row.excluded_countries].join('\u0000');
  let filters = compiled.get(key);
  if (!filters) {
    filters = compileFilters({
      domain: row.domain,
      allowedHostnames: list(row.allowed_hostnames),
      excludedHostnames: list(row.excluded_hostnames),
      excludedPaths: list(row.excluded_paths),
      excludedIps: list(row.excluded_ips),
      excludedCountries: list(row.excluded_countries),
    });
    if (compiled.size >= FILTERS_KEPT) compiled.delete(compiled.keys().next().value!);
    compiled.set(key, filters);
  }
  return filters;
}

const toWebsite = (row: SettingsRow): IngestWebsite => ({ id: row.id, isCookieless: Boolean(row.is_cookieless), filters: filtersOf(row) });

interface Waiting {
  resolve: (row: SettingsRow | undefined) => void;
  reject: (error: unknown) => void;
}

/**
 * On PostgreSQL a lookup is a round trip, so the lookups asked for during one turn of the event
 * loop share one query. Each is still a read made after its request arrived: a settings change
 * committed before then is seen.
 */
class SharedLookups {
  private readonly byId = new Map<string, Waiting[]>();
  private readonly byTrackingId = new Map<string, Waiting[]>();
  private scheduled = false;

  constructor(private readonly db: Kysely<Database>) {}

  find(key: string): Promise<SettingsRow | undefined> {
    return new Promise((resolve, reject) => {
      const waiting = isId(key) ? this.byId : this.byTrackingId;
      const list = waiting.get(key);
      if (list) list.push({ resolve, reject });
      else waiting.set(key, [{ resolve, reject }]);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.run());
      }
    });
  }

  private run(): void {
    this.scheduled = false;
    const groups = [
      { waiting: new Map(this.byId), query: byIds, column: 'id' as const },
      { waiting: new Map(this.byTrackingId), query: byTrackingIds, column: 'tracking_id' as const },
    ];
    this.byId.clear();
    this.byTrackingId.clear();
    for (const { waiting, query, column } of groups) {
      if (waiting.size === 0) continue;
      const keys = [...waiting.keys()];
      for (let i = 0; i < keys.length; i += LOOKUPS_PER_QUERY) {
        const chunk = keys.slice(i, i + LOOKUPS_PER_QUERY);
        query.all(this.db, chunk.map((key): [string] => [key])).then(
          (rows) => {
            const found = new Map(rows.map((row) => [row[column], row]));
            for (const key of chunk) for (const w of waiting.get(key)!) w.resolve(found.get(key));
          },
          (error: unknown) => {
            for (const key of chunk) for (const w of waiting.get(key)!) w.reject(error);
          },
        );
      }
    }
  }
}

const LOOKUPS_PER_QUERY = 100;
const shared = new WeakMap<Kysely<Database>, SharedLookups>();

/**
 * The website an event names, by tracking id (what the snippet carries) or by id. Read on every
 * event, so a settings change applies to the very next one.
 */
export async function findIngestWebsite(db: Kysely<Database>, websiteId: string): Promise<IngestWebsite | null> {
  let row: SettingsRow | undefined;
  if (isPostgres(db)) {
    let lookups = shared.get(db);
    if (!lookups) {
      lookups = new SharedLookups(db);
      shared.set(db, lookups);
    }
    row = await lookups.find(websiteId);
  } else {
    row = await (isId(websiteId) ? byId : byTrackingId).first(db, websiteId);
  }
  return row ? toWebsite(row) : null;
}
