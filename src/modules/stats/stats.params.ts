import { invalidField } from '../../errors.ts';
import { normaliseTimezone } from '../../lib/formats.ts';
import { type InstantRange, parseRange } from '../goals/tracked-goals.range.ts';
import { FILTER_PARAMS, type Filter, parseFilters } from './stats.filters.ts';

// The common query parameters of every analytics read (website-api.md section 2). A route says
// which of them it uses; the others are ignored and named in the X-Sightline-Ignored-Params
// header, except an unknown filter_* name or a bad value, which is a 400 (a dropped filter would
// give wrong numbers silently).

export const IGNORED_PARAMS_HEADER = 'x-sightline-ignored-params';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

export interface WebsiteSettings {
  id: string;
  timezone: string;
  currency: string;
  includeRenewals: boolean;
}

export type CommonParam = 'range' | 'timezone' | 'filters' | 'page' | 'fields';

export interface StatsScope {
  websiteId: string;
  /** null: all time. */
  range: InstantRange | null;
  timezone: string;
  filters: Filter[];
}

export interface PageRequest {
  limit: number;
  offset: number;
}

export interface ParsedParams {
  scope: StatsScope;
  page: PageRequest;
  /** Names of query parameters the route does not use. */
  ignored: string[];
}

const PARAMS_OF: Record<CommonParam, string[]> = {
  range: ['startAt', 'endAt'],
  timezone: ['timezone'],
  filters: FILTER_PARAMS,
  page: ['limit', 'offset'],
  fields: ['fields'],
};

function integerParam(query: Record<string, unknown>, name: string, fallback: number, min: number, max: number): number {
  const raw = query[name];
  if (raw === undefined) return fallback;
  const value = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value) || value < min) throw invalidField(`query.${name}`, `must be an integer of at least ${min}`);
  return Math.min(value, max);
}

/**
 * Reads the parameters `uses` names (plus websiteId and the route's own `extra` names) and lists
 * the rest as ignored. `limit` above 1000 is capped, not refused.
 */
export function parseCommonParams(
  query: Record<string, unknown>,
  website: WebsiteSettings,
  uses: CommonParam[],
  extra: string[] = [],
): ParsedParams {
  const known = new Set(['websiteId', ...extra, ...uses.flatMap((use) => PARAMS_OF[use])]);
  const ignored = Object.keys(query).filter((name) => !known.has(name) && !(uses.includes('filters') && name.startsWith('filter_')));

  let timezone = website.timezone;
  if (uses.includes('timezone') && typeof query.timezone === 'string') {
    const asked = normaliseTimezone(query.timezone);
    if (asked === null) throw invalidField('query.timezone', 'must be an IANA time-zone name such as Europe/Paris');
    timezone = asked;
  }
  const range = uses.includes('range')
    ? parseRange({ startAt: query.startAt as string | undefined, endAt: query.endAt as string | undefined }, timezone, { localInstants: true })
    : null;
  const filters = uses.includes('filters') ? parseFilters(query) : [];
  const page = uses.includes('page')
    ? { limit: integerParam(query, 'limit', DEFAULT_LIMIT, 1, MAX_LIMIT), offset: integerParam(query, 'offset', 0, 0, Number.MAX_SAFE_INTEGER) }
    : { limit: DEFAULT_LIMIT, offset: 0 };
  return { scope: { websiteId: website.id, range, timezone, filters }, page, ignored };
}
