import { type RawBuilder, sql } from 'kysely';
import type { StatsScope } from '../stats.params.ts';
import type { Engine } from '../../../db/database.ts';
import { VISITOR_ATTRIBUTES, type VisitorAttribute } from '../../analytics/visitor-attributes.ts';
import { keyElement } from './breakdown-keys-sql.ts';
import { columnCondition } from './scope-sql.ts';

// What the reads that split a filter on visitor attributes into steady and varied visitors
// share (src/modules/analytics/visitor-attributes.ts): the steady ones are read from rows kept per
// visitor or per profile, tested with the filters as the events' columns are; the varied ones
// from their raw events, found through the partial index of visitor_totals.

/** The website's visitors whose attributes varied (the partial index of visitor_totals finds them). */
export const variedVisitors = (websiteId: string) => sql`select vt.visitor_id from visitor_totals vt where vt.website_id = ${websiteId} and vt.varied <> 0`;

/** The scope's filters over a profile (`p.profile`) or over visitor_totals columns (`v`). */
export function attributeFilters(scope: StatsScope, valueOf: (attribute: VisitorAttribute) => RawBuilder<unknown>): RawBuilder<unknown> {
  return sql.join(
    scope.filters.map((filter) => columnCondition(valueOf(filter.dimension as VisitorAttribute), filter)),
    sql` and `,
  );
}

/** A visitor_totals row (`alias`) of a steady visitor who passes the scope's filters. */
export const steadyAndPassing = (scope: StatsScope, alias: string) =>
  sql`${sql.ref(`${alias}.varied`)} = 0 and ${attributeFilters(scope, (a) => sql.ref(`${alias}.${a}`))}`;

/** The website's steady visitors who pass the scope's filters (with all their events). */
export const steadyPassingVisitors = (scope: StatsScope) =>
  sql`select sv.visitor_id from visitor_totals sv where sv.website_id = ${scope.websiteId} and ${steadyAndPassing(scope, 'sv')}`;

/** The scope's filters over a stored profile (a JSON array of the attributes in VISITOR_ATTRIBUTES order). */
export const profileFilters = (engine: Engine, scope: StatsScope, profile: RawBuilder<unknown>) =>
  attributeFilters(scope, (a) => keyElement(engine, profile, VISITOR_ATTRIBUTES.indexOf(a)));
