// The breakdowns the website API answers (GET /api/v1/analytics/<breakdown>, routed in
// src/modules/stats/stats.routes.ts): the names the reads and the rollups that keep them
// (breakdown-rollups.ts and the files beside it) share. What each one groups is in
// breakdown-specs.ts.

export const BREAKDOWNS = [
  'pages',
  'entry-pages',
  'exit-pages',
  'referrers',
  'campaigns',
  'countries',
  'regions',
  'cities',
  'devices',
  'browsers',
  'operating-systems',
  'hostnames',
  'goals',
  'exit-clicks',
] as const;
export type Breakdown = (typeof BREAKDOWNS)[number];
