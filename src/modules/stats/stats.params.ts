import { invalidField } from '../../errors.ts';
import { normaliseTimezone } from '../../lib/formats.ts';
import { type InstantRange, parseRange } from '../goals/tracked-goals.range.ts';
import { FILTER_PARAMS, type Filter, parseFilters } from './stats.filters.ts';
import type { DerivedState } from './read-planner.ts';
import { type DaySpan, wholeDaysOf } from './whole-days.ts';

// The common query parameters of every analytics read (website-api.md section 2). A route says
// which of them it uses; the others are ignored and named in the X-Sightline-Ignored-Params
// header, except an unknown filter_* name or a bad value, which is a 400 (a dropped filter would
// give wrong numbers silently).

export const IGNORED_PARAMS_HEADER = 'x-sightline-ignored-params';
/** On an answer read from a sample of the events (ClickHouse): the sample's rate, e.g. 0.25. */
export const SAMPLE_RATE_HEADER = 'x-sightline-sample-rate';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

/** What the common parameters need of the website: its id, and its time zone for days. */
export interface WebsiteClock {
  id: string;
  timezone: string;
  /** Its day rollups are moving to a new zone or being built (analytics/day-relocation.ts, derived-build.ts): reads must not use them. */
  relocating?: boolean;
  /** Its derived tables are being built (analytics/derived-build.ts): reads must not use the all-time rollups either. */
  building?: boolean;
}

const FIELD_NAME = /^[A-Za-z_]{1,40}$/;

/**
 * `fields`: a comma list, each name one of `allowed` (kept once, in the order sent), `skip`
 * names accepted and dropped. A name that could be a secret pasted in the wrong place (digits,
 * punctuation) is not echoed in the error.
 */
export function parseFieldNames<T extends string>(raw: string, allowed: readonly T[], skip: readonly string[] = []): T[] {
  const out: T[] = [];
  for (const name of raw.split(',').map((part) => part.trim())) {
    if (skip.includes(name)) continue;
    if (!(allowed as readonly string[]).includes(name)) {
      const shown = name === '' ? 'an empty name' : FIELD_NAME.test(name) ? `"${name}"` : 'an unknown name';
      throw invalidField('query.fields', `${shown} is not a field; use any of: ${allowed.join(', ')}`);
    }
    if (!out.includes(name as T)) out.push(name as T);
  }
  return out;
}

export type CommonParam = 'range' | 'timezone' | 'filters' | 'page' | 'fields';

export interface StatsScope {
  websiteId: string;
  /** null: all time. */
  range: InstantRange | null;
  timezone: string;
  filters: Filter[];
  /** The range as whole local days of the website's own time zone, when it is (whole-days.ts). */
  wholeDays?: DaySpan | null;
  /** What the website's derived data can answer now (read-planner.ts); 'ready' when not said. */
  derivedState?: DerivedState;
  /** `exact=true`: read every event even where a large range would be sampled (ClickHouse). */
  exact?: boolean;
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
  /** The read is answered from the raw events while the website's derived data is rebuilt (X-Sightline-Derived-Data). */
  rebuilding: boolean;
}

const PARAMS_OF: Record<CommonParam, string[]> = {
  range: ['startAt', 'endAt'],
  timezone: ['timezone'],
  filters: [],
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

/** The query names outside `known` (websiteId is always known; with filters, every filter_* name). */
export function ignoredParams(query: Record<string, unknown>, known: readonly string[], filters: boolean): string[] {
  const names = new Set(['websiteId', ...known, ...(filters ? FILTER_PARAMS : [])]);
  return Object.keys(query).filter((name) => !names.has(name) && !(filters && name.startsWith('filter_')));
}

/** `timezone`, when sent, as its canonical IANA name; else the website's. */
export function timezoneParam(raw: unknown, websiteTimezone: string): string {
  if (typeof raw !== 'string') return websiteTimezone;
  const asked = normaliseTimezone(raw);
  if (asked === null) throw invalidField('query.timezone', 'must be an IANA time-zone name such as Europe/Paris');
  return asked;
}

/**
 * Reads the parameters `uses` names (plus websiteId and the route's own `extra` names) and lists
 * the rest as ignored. `limit` above 1000 is capped, not refused.
 */
export function parseCommonParams(
  query: Record<string, unknown>,
  website: WebsiteClock,
  uses: CommonParam[],
  extra: string[] = [],
): ParsedParams {
  const ignored = ignoredParams(query, [...extra, ...uses.flatMap((use) => PARAMS_OF[use])], uses.includes('filters'));
  const timezone = uses.includes('timezone') ? timezoneParam(query.timezone, website.timezone) : website.timezone;
  const range = uses.includes('range')
    ? parseRange({ startAt: query.startAt as string | undefined, endAt: query.endAt as string | undefined }, timezone, { localInstants: true })
    : null;
  const filters = uses.includes('filters') ? parseFilters(query) : [];
  const page = uses.includes('page')
    ? { limit: integerParam(query, 'limit', DEFAULT_LIMIT, 1, MAX_LIMIT), offset: integerParam(query, 'offset', 0, 0, Number.MAX_SAFE_INTEGER) }
    : { limit: DEFAULT_LIMIT, offset: 0 };
  // What the planner (read-planner.ts) asks: is the range whole days of the website's own zone,
  // and may its derived data answer now?
  const derivedState: DerivedState = website.building === true ? 'building' : website.relocating === true ? 'moving' : 'ready';
  const wholeDays = timezone === website.timezone ? wholeDaysOf(range, timezone) : null;
  return { scope: { websiteId: website.id, range, timezone, filters, wholeDays, derivedState }, page, ignored, rebuilding: derivedState !== 'ready' };
}
