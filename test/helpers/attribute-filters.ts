import type { Filter } from '../../src/modules/stats/stats.filters.ts';

// For the reads that split filters on visitor attributes into steady and varied visitors: a range
// around every event of the tests (the same events, read raw), and filter sets on the six
// attributes with every operator, several values, unknown values and two dimensions at once.

export const EVERYTHING = { from: '2000-01-01T00:00:00.000Z', to: '2100-01-01T00:00:00.000Z' };

export const ATTRIBUTE_FILTER_SETS: Filter[][] = [
  [{ dimension: 'country', operator: 'is', values: ['US'] }],
  [{ dimension: 'country', operator: 'is_not', values: ['US'] }],
  [{ dimension: 'country', operator: 'is', values: ['US', 'FR'] }, { dimension: 'device', operator: 'is', values: ['desktop'] }],
  [{ dimension: 'region', operator: 'is_not', values: ['California'] }],
  [{ dimension: 'city', operator: 'does_not_contain', values: ['san'] }],
  [{ dimension: 'city', operator: 'contains', values: ['san', 'aus'] }],
  [{ dimension: 'browser', operator: 'contains', values: ['fire', 'saf'] }, { dimension: 'os', operator: 'is_not', values: ['Linux'] }],
  [{ dimension: 'browser', operator: 'does_not_contain', values: ['fire'] }, { dimension: 'os', operator: 'is', values: ['Windows', 'macOS'] }],
  // contains on a country matches its code; % and _ are literal, as in a stored profile's JSON.
  [{ dimension: 'country', operator: 'contains', values: ['u'] }, { dimension: 'city', operator: 'does_not_contain', values: ['dal'] }],
  [{ dimension: 'country', operator: 'does_not_contain', values: ['s'] }],
  [{ dimension: 'city', operator: 'contains', values: ['a_s', 'd%s'] }],
  [{ dimension: 'os', operator: 'contains', values: ['mac os'], alsoIs: ['macOS'] }, { dimension: 'device', operator: 'contains', values: ['TOP'] }],
];
