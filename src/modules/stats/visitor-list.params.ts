import { invalidField } from '../../errors.ts';
import type { VisitorListOptions } from './event-store.ts';
import { type Filter, pathOf } from './stats.filters.ts';

// The visitor list's own query parameters, as the hosted service's List visitors documents them:
// visitedPage (or page: exact paths, comma-separated), visitedPageContains (or pageContains),
// completedGoal (or goal) and isCustomer (or hasRevenue), which cannot be combined with a goal.
// On this route `page` and `goal` are those spellings, not the filter aliases of filter_page and
// filter_goal (which still filter the events in scope).

const MAX_PAGES = 50;
const MAX_PAGE_LENGTH = 512;

/** Each option under its documented name and its other spelling. */
const SPELLINGS = {
  completedGoal: 'goal',
  visitedPage: 'page',
  visitedPageContains: 'pageContains',
  isCustomer: 'hasRevenue',
} as const;
type Option = keyof typeof SPELLINGS;

/** Every query name the options are read from. */
export const VISITOR_LIST_PARAMS: string[] = Object.entries(SPELLINGS).flat();

/** The option's value and the name it came under; both spellings with different values is a 400. */
function spelled(query: Record<string, unknown>, name: Option): { value: unknown; field: string } | undefined {
  const alias = SPELLINGS[name];
  const [main, other] = [query[name], query[alias]];
  if (main !== undefined && other !== undefined && main !== other) {
    throw invalidField(`query.${alias}`, `is another spelling of ${name}; send one of them`);
  }
  if (main !== undefined) return { value: main, field: `query.${name}` };
  return other === undefined ? undefined : { value: other, field: `query.${alias}` };
}

function pathsOf(raw: unknown, field: string): string[] {
  const values = String(raw)
    .split(',')
    .map((value) => value.trim());
  if (values.some((value) => value === '')) throw invalidField(field, 'needs at least one path, and no empty path between commas');
  if (values.length > MAX_PAGES) throw invalidField(field, `takes at most ${MAX_PAGES} paths`);
  if (values.some((value) => value.length > MAX_PAGE_LENGTH)) throw invalidField(field, `paths are at most ${MAX_PAGE_LENGTH} characters`);
  return values.map(pathOf);
}

/**
 * The options of a visitor list query, and the query left for the common parameters (without
 * `page` and `goal`, so that they are not read as filters).
 */
export function parseVisitorListQuery(query: Record<string, unknown>): { options: VisitorListOptions; common: Record<string, unknown> } {
  const goal = spelled(query, 'completedGoal');
  const pages = spelled(query, 'visitedPage');
  const contains = spelled(query, 'visitedPageContains');
  const customer = spelled(query, 'isCustomer');
  if (goal && customer) {
    throw invalidField(customer.field, `cannot be combined with completedGoal: ask for the visitors who completed ${JSON.stringify(goal.value)}, or for those with${customer.value === false ? 'out' : ''} a payment`);
  }
  const part = contains === undefined ? undefined : String(contains.value).trim();
  if (part === '') throw invalidField(contains!.field, 'needs part of a path');
  const options: VisitorListOptions = {
    ...(goal ? { completedGoal: String(goal.value) } : {}),
    ...(pages ? { visitedPages: pathsOf(pages.value, pages.field) } : {}),
    ...(part !== undefined ? { visitedPageContains: part } : {}),
    ...(customer ? { isCustomer: customer.value === true || customer.value === 'true' } : {}),
  };
  const common = Object.fromEntries(Object.entries(query).filter(([name]) => name !== SPELLINGS.completedGoal && name !== SPELLINGS.visitedPage));
  return { options, common };
}

/** The page conditions of the options, as filters on the path of a pageview the visitor made (each one must hold). */
export function visitedPageFilters(options: VisitorListOptions): Filter[] {
  return [
    ...(options.visitedPages ? [{ dimension: 'page' as const, operator: 'is' as const, values: options.visitedPages }] : []),
    ...(options.visitedPageContains !== undefined ? [{ dimension: 'page' as const, operator: 'contains' as const, values: [options.visitedPageContains] }] : []),
  ];
}
