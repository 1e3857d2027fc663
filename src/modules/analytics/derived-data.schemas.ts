import { type Static, Type } from 'typebox';
import { Nullable, Timestamp } from '../../http/schemas.ts';

// Whether a website's derived data can be read as is, or is being rebuilt in the background: its
// day rollups moving after a change of time zone (day-relocation.ts), or every derived table
// being built from the raw events after an upgrade or on an operator's request (derived-build.ts);
// and how far the rebuild is.

export const DERIVED_DATA_STATES = ['ready', 'rebuilding'] as const;
export type DerivedDataState = (typeof DERIVED_DATA_STATES)[number];

/** A stored funnel's own build (funnel-build.ts): only that funnel's reports read the raw events meanwhile. */
export const FunnelBuild = Type.Object({
  funnelId: Type.String({ description: 'the stored funnel being built' }),
  visitorsDone: Type.Integer({ minimum: 0, description: "the website's visitors the build has passed (in the order of their ids; those with step events derived)" }),
  visitorsTotal: Nullable(Type.Integer({ minimum: 0, description: "the website's visitors; null until the build's first step counts them" })),
  progress: Nullable(Type.Number({ minimum: 0, maximum: 1, description: 'visitorsDone / visitorsTotal, from 0 to 1; null while the total is unknown' })),
  startedAt: Timestamp,
});

const Zone = (description: string) => Nullable(Type.String({ description, examples: ['Asia/Tokyo'] }));

export const DerivedData = Type.Object({
  state: Type.Enum([...DERIVED_DATA_STATES], {
    description: 'ready: reads use the rollups; rebuilding: they are being rebuilt, and the reads that would use them read the raw events meanwhile (answered with X-Sightline-Derived-Data: rebuilding)',
  }),
  reason: Nullable(
    Type.Enum(['timezone', 'build'], {
      description: "why they are rebuilt: timezone, a change of the website's time zone (the day rollups move); build, every derived table built again from the raw events (after an upgrade that adds one, or an operator's rebuild); null when ready",
    }),
  ),
  detail: Nullable(Type.String({ description: 'for a build, who asked for it (for example "migration 0019: breakdown_days, breakdown_last_days"); null otherwise', examples: ['rebuild requested by an operator'] })),
  fromTimezone: Zone('the zone the days are moving from; null when ready'),
  toTimezone: Zone('the zone the days are moving to; null when ready'),
  nextTimezone: Zone('a later change of zone, rebuilt once this one ends (then the website\'s zone); null when none waits'),
  visitorsDone: Type.Integer({ minimum: 0, description: 'visitors whose days are in toTimezone already (a move), or whose rows are built (a build); 0 when ready' }),
  visitorsTotal: Nullable(Type.Integer({ minimum: 0, description: 'visitors to move; null until they are counted (the first step), for a build and when ready' })),
  eventsDone: Type.Integer({ minimum: 0, description: 'for a build, the events derived so far; 0 otherwise' }),
  eventsTotal: Nullable(Type.Integer({ minimum: 0, description: 'for a build, the events to derive; null while the old rows are still being cleared, for a move and when ready' })),
  progress: Nullable(
    Type.Number({ minimum: 0, maximum: 1, description: 'visitorsDone / visitorsTotal for a move, eventsDone / eventsTotal for a build, from 0 to 1; null while the total is unknown and when ready' }),
  ),
  startedAt: Type.Union([Timestamp, Type.Null()], { description: 'when the change of zone was saved or the build asked for; null when ready' }),
  funnelBuilds: Type.Array(FunnelBuild, {
    description:
      "stored funnels created or given other steps on a website with events, whose own tables are being built in the background, oldest first " +
      "(after any build or move above): each funnel's report reads the raw events until its build ends, the website's other reads are unaffected; empty when none",
  }),
});
export type DerivedDataView = Static<typeof DerivedData>;
