import type { Breakdown } from './breakdowns.ts';

// What each breakdown groups, for every event store: the events in scope or the sessions in scope
// (where a session came from is its first event's), the key columns, and which events count.

/** Which events a breakdown over events keeps: every one, or one kind. */
export type EventKind = 'pageviews' | 'goals' | 'link-clicks';

export interface BreakdownSpec {
  from: 'events' | 'sessions';
  /** Output name -> column of the events table or of the sessions table. */
  keys: Record<string, string>;
  /** Only events of this kind (a goal has a name, a link click a target). */
  only?: EventKind;
  /** What `count` counts besides visitors (completions, clicks). */
  counts?: boolean;
}

export const BREAKDOWN_SPECS: Record<Breakdown, BreakdownSpec> = {
  pages: { from: 'events', keys: { hostname: 'hostname', path: 'path' }, only: 'pageviews' },
  'entry-pages': { from: 'sessions', keys: { hostname: 'entry_hostname', path: 'entry_path' } },
  'exit-pages': { from: 'sessions', keys: { hostname: 'entry_hostname', path: 'exit_path' } },
  referrers: { from: 'sessions', keys: { referrer: 'referrer_source' } },
  campaigns: {
    from: 'sessions',
    keys: {
      utm_source: 'utm_source',
      utm_medium: 'utm_medium',
      utm_campaign: 'utm_campaign',
      utm_term: 'utm_term',
      utm_content: 'utm_content',
      ref: 'ref_param',
      source: 'source_param',
      via: 'via_param',
    },
  },
  countries: { from: 'events', keys: { countryCode: 'country' } },
  regions: { from: 'events', keys: { region: 'region', countryCode: 'country' } },
  cities: { from: 'events', keys: { city: 'city', countryCode: 'country' } },
  devices: { from: 'events', keys: { device: 'device' } },
  browsers: { from: 'events', keys: { browser: 'browser' } },
  'operating-systems': { from: 'events', keys: { operating_system: 'os' } },
  hostnames: { from: 'events', keys: { hostname: 'hostname' } },
  goals: { from: 'events', keys: { goal: 'name' }, only: 'goals', counts: true },
  'exit-clicks': { from: 'events', keys: { url: 'link_url' }, only: 'link-clicks', counts: true },
};
