import type { Kysely } from 'kysely';
import { prepareListQuery } from '../../db/prepared.ts';
import type { Database, EventsTable } from '../../db/schema.ts';
import { newId } from '../../lib/ids.ts';
import { fireAlertsForGoals } from '../alerts/alert-firing.ts';
import { updateVisitorTotals } from '../analytics/visitor-totals.ts';
import { updateBreakdownRollups } from '../analytics/breakdown-rollups.ts';
import { profileTotalsIn, profileTotalsOut, visitorsByWebsite } from '../analytics/profile-totals.ts';
import { updateDailyRollups } from '../analytics/rollups.ts';
import { updateSessions } from '../analytics/session-rollup.ts';
import { updateGoalStats } from '../goals/goal-stats.ts';
import type { EventEffectsConfig, NewEvent, RecordedEvent } from './event.types.ts';

// The one place events are written. Everything that must agree with the raw events (rollups,
// sessions, goal statistics, alert history and its queued mail) is written in the same
// transaction, so a crash keeps either all of it or none of it.

type Column = keyof EventsTable;

/** Each stored column and where its value comes from, in one list (the INSERT is built from it). */
const COLUMNS: [Column, (e: RecordedEvent) => string | number | null][] = [
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
  ['region', (e) => e.details?.region ?? null],
  ['city', (e) => e.details?.city ?? null],
  ['browser_version', (e) => e.details?.browserVersion ?? null],
  ['os_version', (e) => e.details?.osVersion ?? null],
  ['viewport_width', (e) => e.details?.viewportWidth ?? null],
  ['viewport_height', (e) => e.details?.viewportHeight ?? null],
  ['referrer_host', (e) => e.details?.referrerHost ?? null],
  ['referrer_source', (e) => e.details?.referrerSource ?? null],
  ['utm_source', (e) => e.details?.utmSource ?? null],
  ['utm_medium', (e) => e.details?.utmMedium ?? null],
  ['utm_campaign', (e) => e.details?.utmCampaign ?? null],
  ['utm_term', (e) => e.details?.utmTerm ?? null],
  ['utm_content', (e) => e.details?.utmContent ?? null],
  ['ref_param', (e) => e.details?.refParam ?? null],
  ['source_param', (e) => e.details?.sourceParam ?? null],
  ['via_param', (e) => e.details?.viaParam ?? null],
  ['link_url', (e) => e.details?.linkUrl ?? null],
  ['description', (e) => e.details?.description ?? null],
];

/** Rows per INSERT: 34 bound values each, well under both engines' bound-parameter limits. */
const ROWS_PER_INSERT = 250;

type EventRow = (string | number | null)[];

// Built once per batch size instead of on every batch (Kysely's multi-row insert costs more to
// build than SQLite takes to store the rows).
const insertEvents = prepareListQuery(COLUMNS.length, (db, rows: EventRow[]) =>
  db.insertInto('events').values(rows.map((row) => Object.fromEntries(COLUMNS.map(([column], i) => [column, row[i]])) as never)),
);

/** With ClickHouse: the event as its ClickHouse row (src/db/clickhouse/clickhouse-schema.ts). */
function clickHouseRow(e: RecordedEvent): string {
  const row: Record<string, string | number | null> = Object.fromEntries(COLUMNS.map(([column, value]) => [column, value(e)]));
  const ms = Date.parse(e.occurredAt);
  row.occurred_at = Math.floor(ms / 1000);
  row.occurred_ms = ms;
  return JSON.stringify(row);
}

const RELAY_ROWS_PER_INSERT = 500;

const queueForClickHouse = prepareListQuery(2, (db, rows: [websiteId: string, row: string][]) =>
  db.insertInto('event_relay').values(rows.map(([websiteId, row]) => ({ website_id: websiteId, row }))),
);

export async function recordEvents(trx: Kysely<Database>, events: NewEvent[], effects: EventEffectsConfig): Promise<RecordedEvent[]> {
  if (events.length === 0) return [];
  const recorded = events.map((event) => ({ ...event, id: newId() }));
  if (effects.eventsInClickHouse) {
    // The raw events go to ClickHouse through the relay, which reads sessions and days from
    // them; only what the relational side serves itself (goal statistics, alerts) is kept here.
    const rows = recorded.map((e): [string, string] => [e.websiteId, clickHouseRow(e)]);
    for (let i = 0; i < rows.length; i += RELAY_ROWS_PER_INSERT) await queueForClickHouse.all(trx, rows.slice(i, i + RELAY_ROWS_PER_INSERT));
  } else {
    const rows = recorded.map((e): EventRow => COLUMNS.map(([, value]) => value(e)));
    for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) await insertEvents.all(trx, rows.slice(i, i + ROWS_PER_INSERT));
    const timezones = await updateDailyRollups(trx, recorded);
    // The batch's visitors leave their profiles' totals as they were and join them as updated.
    const visitors = visitorsByWebsite(recorded);
    for (const [websiteId, visitorIds] of visitors) await profileTotalsOut(trx, websiteId, visitorIds);
    // Before the breakdown rollups: breakdown_profiles follows the visitors' attributes as updated.
    await updateVisitorTotals(trx, recorded);
    await updateSessions(trx, recorded, timezones);
    await updateBreakdownRollups(trx, recorded, timezones);
    for (const [websiteId, visitorIds] of visitors) await profileTotalsIn(trx, websiteId, visitorIds);
  }
  await updateGoalStats(trx, recorded);
  await fireAlertsForGoals(trx, recorded, effects);
  return recorded;
}
