import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { isId } from '../../lib/ids.ts';
import type { WebsiteFilters } from './ingest.filters.ts';

export interface IngestWebsite extends WebsiteFilters {
  id: string;
  isCookieless: boolean;
}

const list = (json: string): string[] => JSON.parse(json) as string[];

/**
 * The website an event names, by tracking id (what the snippet carries) or by id. Read on every
 * event, so a settings change applies to the very next one.
 */
export async function findIngestWebsite(db: Kysely<Database>, websiteId: string): Promise<IngestWebsite | null> {
  const row = await db
    .selectFrom('websites')
    .select([
      'id',
      'domain',
      'is_cookieless',
      'allowed_hostnames',
      'excluded_hostnames',
      'excluded_paths',
      'excluded_ips',
      'excluded_countries',
    ])
    .where(isId(websiteId) ? 'id' : 'tracking_id', '=', websiteId)
    .executeTakeFirst();
  if (!row) return null;
  return {
    id: row.id,
    domain: row.domain,
    isCookieless: Boolean(row.is_cookieless),
    allowedHostnames: list(row.allowed_hostnames),
    excludedHostnames: list(row.excluded_hostnames),
    excludedPaths: list(row.excluded_paths),
    excludedIps: list(row.excluded_ips),
    excludedCountries: list(row.excluded_countries),
  };
}
