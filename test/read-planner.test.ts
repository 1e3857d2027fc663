import { describe, expect, it } from 'vitest';
import { DERIVED_TABLES, type FilterShape, PLANNED_READS, type RangeShape } from '../src/modules/analytics/derived-tables.ts';
import { type DerivedState, type ReadShape, answerRead, isAvailable, planRead, shapeOf } from '../src/modules/stats/read-planner.ts';
import type { StatsScope } from '../src/modules/stats/stats.params.ts';

// The planner (src/modules/stats/read-planner.ts) against the catalogue it reads
// (src/modules/analytics/derived-tables.ts): generated from the declarations, so a table declared
// to answer a read is checked here the day it is declared.

const RANGES: RangeShape[] = ['all-time', 'whole-days', 'whole-hours', 'up-to-now', 'instants'];
const FILTERS: FilterShape[] = ['none', 'visitor-attributes', 'any'];
const STATES: DerivedState[] = ['ready', 'moving', 'building'];
const SHAPES: ReadShape[] = RANGES.flatMap((range) => FILTERS.map((filters) => ({ range, filters })));
const byName = new Map(DERIVED_TABLES.map((table) => [table.name, table]));

describe('the read planner', () => {
  it('sends each declared shape to its table when the website is ready', () => {
    for (const table of DERIVED_TABLES) {
      for (const answer of table.answers ?? []) {
        const ranges: RangeShape[] = answer.range === 'whole-days' ? ['whole-days', 'all-time'] : [answer.range];
        for (const range of ranges) {
          const plan = planRead(answer.read, { range, filters: answer.filters });
          expect(plan, `${table.name} for ${answer.read} over ${range}`).toContain(table.name);
        }
      }
    }
  });

  it('ends every plan with the raw events, and sends instants or any filter to them alone', () => {
    for (const read of PLANNED_READS) {
      for (const state of STATES) {
        for (const shape of SHAPES) {
          const plan = planRead(read, shape, state);
          expect(plan.at(-1)).toBe('events');
          expect(plan.filter((source) => source === 'events')).toHaveLength(1);
          if (shape.range === 'instants' || shape.filters === 'any') expect(plan, `${read} ${JSON.stringify(shape)}`).toEqual(['events']);
        }
      }
    }
  });

  it('never plans a table, or a table read with it, that is not there in the derived data\'s state', () => {
    for (const read of PLANNED_READS) {
      for (const state of STATES) {
        for (const shape of SHAPES) {
          for (const source of planRead(read, shape, state)) {
            if (source === 'events') continue;
            const table = byName.get(source)!;
            expect(isAvailable(table, state), `${source} while ${state}`).toBe(true);
            const answer = table.answers!.find((a) => a.read === read && a.filters === shape.filters)!;
            if (answer.fresh) expect(state, `${source} needs the newest events`).not.toBe('building');
            for (const other of answer.with ?? []) expect(isAvailable(byName.get(other)!, state), `${other} with ${source} while ${state}`).toBe(true);
          }
        }
      }
    }
    // What a build clears and a move shifts, by name: the catalogue's flags decide, as the build and the move use them.
    expect(planRead('overview', { range: 'whole-days', filters: 'none' }, 'moving')).toEqual(['events']);
    // The hour rollups are UTC hours: a move leaves them answering, a build does not; days never go to them, nor hours to the days.
    expect(planRead('series', { range: 'whole-hours', filters: 'none' }, 'moving')).toEqual(['hour_totals', 'events']);
    expect(planRead('series', { range: 'whole-hours', filters: 'none' }, 'building')).toEqual(['events']);
    expect(planRead('series', { range: 'whole-days', filters: 'none' })).toEqual(['daily_totals', 'events']);
    expect(planRead('series', { range: 'whole-hours', filters: 'any' })).toEqual(['events']);
    expect(planRead('overview', { range: 'whole-hours', filters: 'none' })).toEqual(['events']);
    expect(planRead('breakdown', { range: 'all-time', filters: 'none' }, 'moving')).toEqual(['breakdown_totals', 'events']);
    expect(planRead('breakdown', { range: 'all-time', filters: 'none' }, 'building')).toEqual(['events']);
    expect(planRead('visitor-list', { range: 'all-time', filters: 'visitor-attributes' }, 'building')).toEqual(['visitor_totals', 'events']);
    expect(planRead('breakdown', { range: 'whole-days', filters: 'none' })).toEqual(['breakdown_days', 'events']);
    // Who is online: each visitor's latest event, but not from rows a build has not brought up to date.
    expect(planRead('realtime', { range: 'up-to-now', filters: 'none' })).toEqual(['visitor_totals', 'events']);
    expect(planRead('realtime', { range: 'up-to-now', filters: 'none' }, 'moving')).toEqual(['visitor_totals', 'events']);
    expect(planRead('realtime', { range: 'up-to-now', filters: 'none' }, 'building')).toEqual(['events']);
    expect(planRead('visitor-list', { range: 'up-to-now', filters: 'none' })).toEqual(['events']);
  });

  it('names each table a declaration says its reader reads with', () => {
    for (const table of DERIVED_TABLES) {
      for (const answer of table.answers ?? []) for (const other of answer.with ?? []) expect(byName.has(other), other).toBe(true);
    }
  });

  it('shapes a scope by its range and filters', () => {
    const scope = (over: Partial<StatsScope>): StatsScope => ({ websiteId: 'w', range: null, timezone: 'UTC', filters: [], ...over });
    const march = { from: '2026-03-01T00:00:00.000Z', to: '2026-04-01T00:00:00.000Z' };
    expect(shapeOf(scope({}))).toEqual({ range: 'all-time', filters: 'none' });
    expect(shapeOf(scope({ range: march, wholeDays: { first: '2026-03-01', last: '2026-03-31' } }))).toEqual({ range: 'whole-days', filters: 'none' });
    expect(shapeOf(scope({ range: march, wholeDays: null }))).toEqual({ range: 'instants', filters: 'none' });
    expect(shapeOf(scope({ filters: [{ dimension: 'country', operator: 'is', values: ['US'] }] as StatsScope['filters'] })).filters).toBe('visitor-attributes');
    expect(shapeOf(scope({ filters: [{ dimension: 'page', operator: 'is', values: ['/'] }] as StatsScope['filters'] })).filters).toBe('any');
  });

  it('answers from the next source when a reader gives up, and refuses a planned table without a reader', async () => {
    const shape: ReadShape = { range: 'whole-days', filters: 'none' };
    const answered = await answerRead('breakdown', shape, 'ready', { breakdown_days: async () => undefined, events: async () => 'raw' });
    expect(answered).toBe('raw');
    await expect(answerRead('breakdown', shape, 'ready', { events: async () => 'raw' })).rejects.toThrow(/no reader for breakdown_days/);
  });
});
