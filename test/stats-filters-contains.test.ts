import { describe, expect, it } from 'vitest';
import { parseFilters } from '../src/modules/stats/stats.filters.ts';

// How contains / does_not_contain values are read for each kind of dimension (website-api.md
// section 2): as given, but a path read as one and a shown label's stored name matched too.

describe('contains filters, parsed', () => {
  it('keeps values as substrings: no country or device check, trimmed, deduplicated', () => {
    expect(parseFilters({ filter_country: 'contains:u, U ,u' })).toEqual([{ dimension: 'country', operator: 'contains', values: ['u', 'U'] }]);
    expect(parseFilters({ device: 'does_not_contain:top' })).toEqual([{ dimension: 'device', operator: 'does_not_contain', values: ['top'] }]);
    expect(parseFilters({ filter_city: 'contains:San Jo' })).toEqual([{ dimension: 'city', operator: 'contains', values: ['San Jo'] }]);
  });

  it('reads a page value as a path, as before', () => {
    expect(parseFilters({ filter_page: 'contains:blog' })).toEqual([{ dimension: 'page', operator: 'contains', values: ['/blog'] }]);
  });

  it('matches the stored name of a shown label that contains the value', () => {
    expect(parseFilters({ filter_referrer: 'contains:x' })).toEqual([{ dimension: 'referrer', operator: 'contains', values: ['x'], alsoIs: ['Twitter'] }]);
    expect(parseFilters({ filter_os: 'does_not_contain:MAC OS' })).toEqual([{ dimension: 'os', operator: 'does_not_contain', values: ['MAC OS'], alsoIs: ['macOS'] }]);
    // The stored name contains it already: nothing to add.
    expect(parseFilters({ filter_browser: 'contains:edge' })).toEqual([{ dimension: 'browser', operator: 'contains', values: ['edge'] }]);
  });

  it('refuses an empty value, naming the field', () => {
    expect(() => parseFilters({ filter_goal: 'contains:' })).toThrow(/filter_goal/);
    expect(() => parseFilters({ filter_source: 'contains:a,' })).toThrow(/filter_source/);
  });
});
