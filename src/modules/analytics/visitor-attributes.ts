import type { NewEvent } from '../../db/event-records.ts';

// The filter dimensions that describe the visitor rather than the page: where they are and what
// they browse with. Nearly every visitor keeps one value of each across all their events, so
// visitor_totals (src/modules/analytics/visitor-totals.ts) keeps that value per visitor, with a
// bit per dimension that is set once two of the visitor's events disagree (a trip abroad, a
// server goal that knows no city). A filter on these dimensions alone then selects whole
// visitors: those whose filtered dimensions never varied pass or fail with all their events,
// the others are read from their raw events. Each is a column of the same name on events and on
// visitor_totals.

export const VISITOR_ATTRIBUTES = ['country', 'region', 'city', 'device', 'browser', 'os'] as const;
export type VisitorAttribute = (typeof VISITOR_ATTRIBUTES)[number];

/** The bit of visitor_totals.varied that says the visitor's events disagree on this attribute. */
export const attributeBit = (attribute: VisitorAttribute): number => 1 << VISITOR_ATTRIBUTES.indexOf(attribute);

const isAttribute = (dimension: string): dimension is VisitorAttribute => (VISITOR_ATTRIBUTES as readonly string[]).includes(dimension);

/** The bits of the filters' attributes, or null when one of the filters is on another dimension. */
export function attributeMask(filters: readonly { dimension: string }[]): number | null {
  let mask = 0;
  for (const filter of filters) {
    if (!isAttribute(filter.dimension)) return null;
    mask |= attributeBit(filter.dimension);
  }
  return mask;
}

/** An event's values of the attributes, in VISITOR_ATTRIBUTES order (unknown is null). */
export function attributesOf(event: NewEvent): (string | null)[] {
  return [event.country, event.details?.region ?? null, event.details?.city ?? null, event.device, event.browser, event.os];
}
