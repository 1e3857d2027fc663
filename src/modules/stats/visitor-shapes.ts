import type { EventsTable } from '../../db/schema.ts';
import type { LiveVisitor, VisitorSummary } from './event-store.ts';

// The visitor shapes every event store answers with, built from an event row of the store (the
// relational events table's columns, wherever the row comes from): a visitor's latest event with
// a page gives their place, device and current URL, their first event the campaign parameters.

export type EventRow = EventsTable;

const PARAMS: [keyof EventRow, string][] = [
  ['utm_source', 'utm_source'],
  ['utm_medium', 'utm_medium'],
  ['utm_campaign', 'utm_campaign'],
  ['utm_term', 'utm_term'],
  ['utm_content', 'utm_content'],
  ['ref_param', 'ref'],
  ['source_param', 'source'],
  ['via_param', 'via'],
];

/** The campaign parameters an event carried, by their URL names. */
export function paramsOf(row: EventRow | undefined): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [column, name] of PARAMS) {
    const value = row?.[column];
    if (typeof value === 'string') params[name] = value;
  }
  return params;
}

export function urlOf(row: Pick<EventRow, 'hostname' | 'path'> | undefined): string | null {
  return row?.hostname && row.path ? `https://${row.hostname}${row.path}` : null;
}

/** A live map visitor from their latest event with a page, their visit count and what they paid under. */
export function liveVisitor(visitorId: string, latest: EventRow | undefined, visitCount: number, customer: string | null | undefined): LiveVisitor {
  return {
    visitorId,
    countryCode: latest?.country ?? null,
    region: latest?.region ?? null,
    city: latest?.city ?? null,
    browser: latest?.browser ?? null,
    os: latest?.os ?? null,
    device: latest?.device ?? null,
    currentUrl: urlOf(latest),
    referrer: latest?.referrer_source ?? null,
    params: paramsOf(latest),
    visitCount,
    customer,
  };
}

export interface VisitorTotals {
  visitorId: string;
  pageViewCount: number;
  /** ISO instants. */
  firstVisitAt: string;
  lastVisitAt: string;
}

/** A visitor's summary from their totals, latest and first events and visit count. */
export function visitorSummary(totals: VisitorTotals, latest: EventRow | undefined, first: EventRow | undefined, visitCount: number): VisitorSummary {
  return {
    ...totals,
    countryCode: latest?.country ?? null,
    region: latest?.region ?? null,
    city: latest?.city ?? null,
    browser: latest?.browser ?? null,
    browserVersion: latest?.browser_version ?? null,
    os: latest?.os ?? null,
    osVersion: latest?.os_version ?? null,
    device: latest?.device ?? null,
    viewportWidth: latest?.viewport_width ?? null,
    viewportHeight: latest?.viewport_height ?? null,
    params: paramsOf(first),
    visitCount,
    currentUrl: urlOf(latest),
  };
}
