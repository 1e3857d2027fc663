import { invalidField } from '../../errors.ts';
import { countryCodeOf } from './countries.ts';
import { isLabelled, storedNamesShownContaining, storedValuesOf } from './labels.ts';
import { pathOf } from '../../lib/page-path.ts';

// The website API's filters (website-api.md section 2): `filter_<dim>=<op>:<v1>,<v2>`, values
// OR-ed, filters AND-ed, `is` when the operator is left out; the bare dimension name is an alias
// older clients send. Parsing lives here; turning a filter into SQL is the event store's job.

export const DIMENSIONS = [
  'country',
  'region',
  'city',
  'device',
  'browser',
  'os',
  'referrer',
  'page',
  'entry_page',
  'hostname',
  'goal',
  'ref',
  'source',
  'via',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_term',
  'utm_content',
] as const;
export type Dimension = (typeof DIMENSIONS)[number];

export const OPERATORS = ['is', 'is_not', 'contains', 'does_not_contain'] as const;
export type Operator = (typeof OPERATORS)[number];

/** Dimensions whose values are paths: a value is read as a path, and `is` takes the * wildcard. */
export const PATH_DIMENSIONS: readonly Dimension[] = ['page', 'entry_page'];

export interface Filter {
  dimension: Dimension;
  operator: Operator;
  /** `is`/`is_not`: stored values; `contains`/`does_not_contain`: substrings, matched ignoring case. */
  values: string[];
  /**
   * `contains`/`does_not_contain` on a labelled dimension (labels.ts): stored names whose shown
   * label contains one of the substrings while the stored name does not (`X` stands for the stored
   * `Twitter`), matched exactly besides the substrings.
   */
  alsoIs?: string[];
}

/** Whether the filter's values are substrings rather than whole values. */
export const isSubstringFilter = (filter: Pick<Filter, 'operator'>): boolean => filter.operator === 'contains' || filter.operator === 'does_not_contain';

const DEVICES = ['desktop', 'mobile', 'tablet', 'tv'];
const MAX_VALUES = 50;
const MAX_VALUE_LENGTH = 512;

function parseOne(field: string, dimension: Dimension, raw: string): Filter {
  let operator: Operator = 'is';
  let rest = raw;
  const colon = raw.indexOf(':');
  if (colon > 0 && (OPERATORS as readonly string[]).includes(raw.slice(0, colon))) {
    operator = raw.slice(0, colon) as Operator;
    rest = raw.slice(colon + 1);
  } else if (colon > 0 && /^[a-z_]+$/.test(raw.slice(0, colon)) && !/^https?$/.test(raw.slice(0, colon))) {
    throw invalidField(field, `"${raw.slice(0, colon)}" is not an operator; use one of ${OPERATORS.join(', ')}`);
  }
  const values = rest.split(',').map((value) => value.trim());
  if (values.some((value) => value === '')) throw invalidField(field, 'needs at least one value, and no empty value between commas');
  if (values.length > MAX_VALUES) throw invalidField(field, `takes at most ${MAX_VALUES} values`);
  if (values.some((value) => value.length > MAX_VALUE_LENGTH)) throw invalidField(field, `values are at most ${MAX_VALUE_LENGTH} characters`);
  if (isSubstringFilter({ operator })) return substringFilter(dimension, operator, values);
  return { dimension, operator, values: [...new Set(values.flatMap((value) => normaliseValue(field, dimension, value)))] };
}

/**
 * A contains/does_not_contain filter: each value is a substring of the stored value, as it is
 * (a country's ISO code, a device's name, a goal's raw name), but for a path, read as one (`blog`
 * is `/blog`); a shown label's stored name is matched too (`alsoIs`). No value is checked against
 * a list: `contains:U` on country is every code with a U.
 */
function substringFilter(dimension: Dimension, operator: Operator, values: string[]): Filter {
  const parts = [...new Set(PATH_DIMENSIONS.includes(dimension) ? values.map(pathOf) : values)];
  if (!isLabelled(dimension)) return { dimension, operator, values: parts };
  const alsoIs = [...new Set(parts.flatMap((part) => storedNamesShownContaining(dimension, part)))];
  return { dimension, operator, values: parts, ...(alsoIs.length > 0 ? { alsoIs } : {}) };
}

/** The stored values a filter value matches (one, but a shown label may stand for several). */
function normaliseValue(field: string, dimension: Dimension, value: string): string | string[] {
  if (isLabelled(dimension)) return storedValuesOf(dimension, value);
  if (dimension === 'country') {
    const code = countryCodeOf(value);
    if (!code) throw invalidField(field, `"${value.slice(0, 60)}" is not a country; use an ISO 3166 alpha-2 code such as DE or a name such as Germany`);
    return code;
  }
  if (dimension === 'device') {
    const device = value.toLowerCase();
    if (!DEVICES.includes(device)) throw invalidField(field, `must be one of ${DEVICES.join(', ')}`);
    return device;
  }
  if (dimension === 'hostname') return value.toLowerCase();
  if (PATH_DIMENSIONS.includes(dimension)) return pathOf(value);
  return value;
}

/** A page as a path pattern (src/lib/page-path.ts: the derived funnels match steps by it too). */
export { pathOf };

/**
 * The filters of a query: `filter_<dim>` and its alias `<dim>`. An unknown `filter_*` name is a
 * 400 (a silently dropped filter gives wrong numbers); the same dimension twice is one too.
 */
export function parseFilters(query: Record<string, unknown>): Filter[] {
  const filters: Filter[] = [];
  const seen = new Set<Dimension>();
  for (const [name, raw] of Object.entries(query)) {
    const prefixed = name.startsWith('filter_');
    const dimension = (prefixed ? name.slice('filter_'.length) : name) as Dimension;
    if (!(DIMENSIONS as readonly string[]).includes(dimension)) {
      if (prefixed) throw invalidField(`query.${name}`, `is not a filter; filters are filter_ followed by one of: ${DIMENSIONS.join(', ')}`);
      continue;
    }
    const field = `query.${name}`;
    if (typeof raw !== 'string') throw invalidField(field, 'must be given once, as op:value1,value2');
    if (seen.has(dimension)) throw invalidField(field, `filters ${dimension} a second time (filter_${dimension} and ${dimension} are the same filter)`);
    seen.add(dimension);
    filters.push(parseOne(field, dimension, raw));
  }
  return filters;
}

/** The query names a filter may be sent under (for the route schemas and the ignored-parameter list). */
export const FILTER_PARAMS: string[] = DIMENSIONS.flatMap((dimension) => [`filter_${dimension}`, dimension]);
