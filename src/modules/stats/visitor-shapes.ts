import type { EventsTable } from '../../db/schema.ts';
import type { LiveEvent, LiveVisitor, VisitorListItem, VisitorPlace, VisitorSummary } from './event-store.ts';

// The visitor shapes every event store answers with, built from an event row of the store (the
// relational events table's columns, wherever the row comes from): a visitor's latest event with
// a page gives their place, device and current URL, their first event the campaign parameters,
// their first session (or the first event of one) where they came from.

export type EventRow = EventsTable;

const PARAMS = [
  ['utm_source', 'utm_source'],
  ['utm_medium', 'utm_medium'],
  ['utm_campaign', 'utm_campaign'],
  ['utm_term', 'utm_term'],
  ['utm_content', 'utm_content'],
  ['ref_param', 'ref'],
  ['source_param', 'source'],
  ['via_param', 'via'],
] as const;

/** The URL names of the campaign parameters, in the order the hosted service lists them. */
export const PARAM_NAMES = PARAMS.map(([, name]) => name);

/** A row that carries where a visit came from: an event, or a session (its first event's values). */
export type SourceRow = Pick<EventRow, 'referrer_source' | (typeof PARAMS)[number][0]>;

/** The campaign parameters an event or session carried, by their URL names (the unset ones left out). */
export function paramsOf(row: Partial<SourceRow> | undefined): Record<string, string> {
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

/** A visitor's place and device, from their latest event with a page. */
function placeOf(latest: EventRow | undefined): VisitorPlace {
  return {
    countryCode: latest?.country ?? null,
    region: latest?.region ?? null,
    city: latest?.city ?? null,
    browser: latest?.browser ?? null,
    os: latest?.os ?? null,
    device: latest?.device ?? null,
  };
}

/** A visitor's sessions: how many, and when the latest one started (ISO instant). */
export interface VisitStats {
  count: number;
  currentStartAt: string;
}

/**
 * A live map visitor from their latest event with a page, where the visit it belongs to came from
 * (`visit`: its session's source; else the event's own, which after a full-page click is the
 * site itself), and their sessions.
 */
export function liveVisitor(visitorId: string, latest: EventRow | undefined, visits: VisitStats | undefined, visit?: Partial<SourceRow>): LiveVisitor {
  const source = visit ?? latest;
  return {
    visitorId,
    ...placeOf(latest),
    currentUrl: urlOf(latest),
    referrer: source?.referrer_source ?? null,
    params: paramsOf(source),
    visitCount: visits?.count ?? 0,
    sessionStartedAt: visits?.currentStartAt ?? null,
  };
}

export interface VisitorTotals {
  visitorId: string;
  pageViewCount: number;
  /** ISO instants. */
  firstVisitAt: string;
  lastVisitAt: string;
}

/** A visitor's summary from their totals, latest and first events and sessions. */
export function visitorSummary(totals: VisitorTotals, latest: EventRow | undefined, first: EventRow | undefined, visits: VisitStats | undefined): VisitorSummary {
  return {
    ...totals,
    ...placeOf(latest),
    browserVersion: latest?.browser_version ?? null,
    osVersion: latest?.os_version ?? null,
    viewportWidth: latest?.viewport_width ?? null,
    viewportHeight: latest?.viewport_height ?? null,
    params: paramsOf(first),
    visitCount: visits?.count ?? 0,
    currentVisitAt: visits?.currentStartAt ?? null,
    currentUrl: urlOf(latest),
  };
}

/** A visitor list row from the visitor's last instant in scope, latest event with a page and first session. */
export function visitorListItem(visitorId: string, lastSeenAt: string, latest: EventRow | undefined, firstVisit: SourceRow | undefined): VisitorListItem {
  return {
    visitorId,
    lastSeenAt,
    currentUrl: urlOf(latest),
    ...placeOf(latest),
    acquisition: { referrer: firstVisit?.referrer_source ?? null, params: paramsOf(firstVisit) },
  };
}

/** A recent event of the live map, from its row and its instant (ISO). */
export function liveEvent(row: Pick<EventRow, 'id' | 'type' | 'name' | 'visitor_id' | 'path' | 'country' | 'referrer_source' | 'metadata'>, occurredAt: string): LiveEvent {
  return {
    id: row.id,
    type: row.type,
    name: row.name,
    visitorId: row.visitor_id,
    occurredAt,
    path: row.path,
    countryCode: row.country,
    referrer: row.referrer_source,
    metadata: row.metadata === null ? {} : (JSON.parse(row.metadata) as Record<string, string>),
  };
}
