import { type Static, Type } from 'typebox';
import { Nullable, Timestamp } from '../../http/schemas.ts';

// Whether a website's derived data (its day rollups) can be read as is, or is being rebuilt in the
// background after a change of time zone (day-relocation.ts), and how far the rebuild is.

export const DERIVED_DATA_STATES = ['ready', 'rebuilding'] as const;
export type DerivedDataState = (typeof DERIVED_DATA_STATES)[number];

const Zone = (description: string) => Nullable(Type.String({ description, examples: ['Asia/Tokyo'] }));

export const DerivedData = Type.Object({
  state: Type.Enum([...DERIVED_DATA_STATES], {
    description: 'ready: reads use the day rollups; rebuilding: they are being rebuilt, and the reads that would use them read the raw events meanwhile (answered with X-Sightline-Derived-Data: rebuilding)',
  }),
  reason: Nullable(Type.Literal('timezone', { description: "why they are rebuilt: timezone, a change of the website's time zone; null when ready" })),
  fromTimezone: Zone('the zone the days are moving from; null when ready'),
  toTimezone: Zone('the zone the days are moving to; null when ready'),
  nextTimezone: Zone('a later change of zone, rebuilt once this one ends (then the website\'s zone); null when none waits'),
  visitorsDone: Type.Integer({ minimum: 0, description: 'visitors whose days are in toTimezone already; 0 when ready' }),
  visitorsTotal: Nullable(Type.Integer({ minimum: 0, description: 'visitors to move; null until they are counted (the first step) and when ready' })),
  progress: Nullable(Type.Number({ minimum: 0, maximum: 1, description: 'visitorsDone / visitorsTotal, from 0 to 1; null while the total is unknown and when ready' })),
  startedAt: Type.Union([Timestamp, Type.Null()], { description: 'when the change of zone was saved; null when ready' }),
});
export type DerivedDataView = Static<typeof DerivedData>;
