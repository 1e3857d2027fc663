import type { EventDetails, NewEvent, RecordedEvent } from './event-records.ts';
import type { EventsTable } from './schema.ts';

// How an event maps to the columns of the events table, both ways: ingestion writes rows from
// it, and the rollup deriver (src/modules/analytics/rollup-backlog.ts) reads stored rows back as events.

type Column = keyof EventsTable;

/** The details and the column each is stored in. */
const DETAIL_COLUMNS: [keyof EventDetails, Column][] = [
  ['region', 'region'],
  ['city', 'city'],
  ['browserVersion', 'browser_version'],
  ['osVersion', 'os_version'],
  ['viewportWidth', 'viewport_width'],
  ['viewportHeight', 'viewport_height'],
  ['referrerHost', 'referrer_host'],
  ['referrerSource', 'referrer_source'],
  ['utmSource', 'utm_source'],
  ['utmMedium', 'utm_medium'],
  ['utmCampaign', 'utm_campaign'],
  ['utmTerm', 'utm_term'],
  ['utmContent', 'utm_content'],
  ['refParam', 'ref_param'],
  ['sourceParam', 'source_param'],
  ['viaParam', 'via_param'],
  ['linkUrl', 'link_url'],
  ['description', 'description'],
];

/** Each stored column and where its value comes from, in one list (the INSERT is built from it). */
export const COLUMNS: [Column, (e: RecordedEvent) => string | number | null][] = [
  ['id', (e) => e.id],
  ['website_id', (e) => e.websiteId],
  ['type', (e) => e.type],
  ['name', (e) => e.name],
  ['visitor_id', (e) => e.visitorId],
  ['session_id', (e) => e.sessionId],
  ['hostname', (e) => e.hostname],
  ['path', (e) => e.path],
  ['referrer', (e) => e.referrer],
  ['country', (e) => e.country],
  ['browser', (e) => e.browser],
  ['os', (e) => e.os],
  ['device', (e) => e.device],
  ['metadata', (e) => (e.metadata ? JSON.stringify(e.metadata) : null)],
  ['source', (e) => e.source],
  ['occurred_at', (e) => e.occurredAt],
  ...DETAIL_COLUMNS.map(([detail, column]): [Column, (e: RecordedEvent) => string | number | null] => [column, (e) => e.details?.[detail] ?? null]),
];

export type EventRow = (string | number | null)[];

/** The event's values in the order of COLUMNS. */
export const eventRow = (e: RecordedEvent): EventRow => COLUMNS.map(([, value]) => value(e));

/** A stored row as the event that was written (eventRow's inverse). */
export function eventFromRow(row: EventsTable): RecordedEvent {
  const details = Object.fromEntries(DETAIL_COLUMNS.map(([detail, column]) => [detail, row[column]])) as EventDetails;
  return {
    id: row.id,
    websiteId: row.website_id,
    type: row.type as NewEvent['type'],
    name: row.name,
    visitorId: row.visitor_id,
    sessionId: row.session_id,
    hostname: row.hostname,
    path: row.path,
    referrer: row.referrer,
    country: row.country,
    browser: row.browser,
    os: row.os,
    device: row.device,
    metadata: row.metadata === null ? null : (JSON.parse(row.metadata) as Record<string, string>),
    source: row.source as NewEvent['source'],
    occurredAt: row.occurred_at,
    details,
  };
}
