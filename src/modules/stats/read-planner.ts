import { type Answer, DERIVED_TABLES, type DerivedTable, type DerivedTableName, type FilterShape, type PlannedRead, type RangeShape } from '../analytics/derived-tables.ts';
import { attributeMask } from '../analytics/visitor-attributes.ts';
import type { StatsScope } from './stats.params.ts';

// The one place that decides which rows answer a read of the relational store, as Plausible's
// TableDecider does for its tables: the read's shape (its range and its filters) is matched
// against the shapes each derived table declares it answers (analytics/derived-tables.ts), in
// the catalogue's order, and the raw events answer whatever no available table does. A reader
// (sql/*.ts) names what to run for each source it can read; a declared answer without its reader
// is a bug the planner's test finds (test/read-planner.test.ts).
//
// Availability follows the website's derived data (stats.params.ts `derivedState`): while a
// build runs, only the tables it does not clear (declared replacedPerVisitor or keptAtIngestion)
// can answer; while the website's days move to a new zone, the tables of local days cannot.

/** Where a read's rows come from: a derived table, or the raw events. */
export type ReadSource = DerivedTableName | 'events';

/** The state of the website's derived data that decides what may answer. */
export type DerivedState = 'ready' | 'moving' | 'building';

/** The read's range and filters, in the declarations' terms. */
export interface ReadShape {
  range: RangeShape;
  filters: FilterShape;
}

/** The shape of a read over `scope`: 'whole-days' when the range is whole local days of the website's own zone. */
export function shapeOf(scope: StatsScope): ReadShape {
  const range: RangeShape = scope.range === null ? 'all-time' : scope.wholeDays ? 'whole-days' : 'instants';
  const filters: FilterShape = scope.filters.length === 0 ? 'none' : attributeMask(scope.filters) !== null ? 'visitor-attributes' : 'any';
  return { range, filters };
}

/** Whether the table's rows can be read while the website's derived data is in `state`. */
export function isAvailable(table: DerivedTable, state: DerivedState): boolean {
  if (state === 'building') return table.replacedPerVisitor === true || table.keptAtIngestion === true;
  if (state === 'moving') return !table.localDays;
  return true;
}

const byName = new Map(DERIVED_TABLES.map((table) => [table.name, table]));

function fits(answer: Answer, read: PlannedRead, shape: ReadShape): boolean {
  if (answer.read !== read || answer.filters !== shape.filters) return false;
  if (answer.range === 'all-time') return shape.range === 'all-time';
  if (answer.range === 'whole-hours' || answer.range === 'up-to-now') return shape.range === answer.range;
  return shape.range === 'all-time' || shape.range === 'whole-days';
}

/**
 * The sources that may answer the read, best first: each available declared table whose answers
 * fit its shape (it and every table it is read with), then the raw events, which answer anything.
 */
export function planRead(read: PlannedRead, shape: ReadShape, state: DerivedState = 'ready'): ReadSource[] {
  const usable = (name: DerivedTableName) => isAvailable(byName.get(name)!, state);
  const tables = DERIVED_TABLES.filter(
    (table) =>
      usable(table.name) &&
      (table.answers ?? []).some((answer) => fits(answer, read, shape) && (answer.with ?? []).every(usable) && !(answer.fresh && state === 'building')),
  ).map((table) => table.name);
  return [...tables, 'events'];
}

/**
 * A reader's way to answer from each source it knows. One may give up (undefined: its table does
 * not cover the range after all, such as day rollups behind the latest event), and the next
 * source answers.
 */
export type Readers<T> = Partial<Record<ReadSource, () => Promise<T | undefined>>> & { events: () => Promise<T> };

/** Answers the read from the first planned source that does; a planned table without its reader is a bug. */
export async function answerRead<T>(read: PlannedRead, shape: ReadShape, state: DerivedState, readers: Readers<T>): Promise<T> {
  for (const source of planRead(read, shape, state)) {
    const reader = readers[source];
    if (!reader) throw new Error(`read-planner: the ${read} read has no reader for ${source}, which declares it answers it`);
    const answer = await reader();
    if (answer !== undefined) return answer;
  }
  throw new Error('read-planner: the raw events did not answer');
}
