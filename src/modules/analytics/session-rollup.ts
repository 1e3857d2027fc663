import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { prepareListQuery } from '../../db/prepared.ts';
import type { Database } from '../../db/schema.ts';
import { chunks } from '../../lib/chunks.ts';
import type { RecordedEvent } from '../../db/event-records.ts';
import { followSessionUpsert, sessionsWhere } from './session-breakdown-rollups.ts';
import { addSessionTotals } from './visitor-totals.ts';

// Keeps the sessions table current, inside the transaction that records the events: one row
// per SDK session id with its start and end, its entry and exit pages and its counts, so bounce
// rate, session duration and entry/exit pages read one row per session instead of its events.
// A batch costs one upsert whatever its size (and the set-based statements that move the session
// breakdowns' rollups around it). Events without a session id (server-side goals) belong to no
// session.

const ROWS_PER_INSERT = 500;

type SessionTuple = [
  websiteId: string,
  sessionId: string,
  visitorId: string,
  startedAt: string,
  endedAt: string,
  pageviews: number,
  events: number,
  goals: number,
  entryHostname: string | null,
  entryPath: string | null,
  exitPath: string | null,
  ...source: (string | null)[],
];

/** Where a session came from: its first event's referrer and campaign parameters, never updated. */
export const SOURCE_COLUMNS = [
  ['referrer_host', 'referrerHost'],
  ['referrer_source', 'referrerSource'],
  ['utm_source', 'utmSource'],
  ['utm_medium', 'utmMedium'],
  ['utm_campaign', 'utmCampaign'],
  ['utm_term', 'utmTerm'],
  ['utm_content', 'utmContent'],
  ['ref_param', 'refParam'],
  ['source_param', 'sourceParam'],
  ['via_param', 'viaParam'],
] as const;
const FIXED = 11;

const later = (column: string) => sql.raw<string>(`case when excluded.${column} > sessions.${column} then excluded.${column} else sessions.${column} end`);

const upsertSessions = prepareListQuery(FIXED + SOURCE_COLUMNS.length, (db, rows: SessionTuple[]) =>
  db
    .insertInto('sessions')
    .values(
      rows.map((r) => ({
        website_id: r[0],
        session_id: r[1],
        visitor_id: r[2],
        started_at: r[3],
        ended_at: r[4],
        pageviews: r[5],
        events: r[6],
        goals: r[7],
        entry_hostname: r[8],
        entry_path: r[9],
        exit_path: r[10],
        ...Object.fromEntries(SOURCE_COLUMNS.map(([column], i) => [column, r[FIXED + i]])),
      })),
    )
    .onConflict((oc) =>
      oc.columns(['website_id', 'session_id']).doUpdateSet({
        started_at: sql`case when excluded.started_at < sessions.started_at then excluded.started_at else sessions.started_at end`,
        ended_at: later('ended_at'),
        pageviews: sql`sessions.pageviews + excluded.pageviews`,
        events: sql`sessions.events + excluded.events`,
        goals: sql`sessions.goals + excluded.goals`,
        entry_hostname: sql`coalesce(sessions.entry_hostname, excluded.entry_hostname)`,
        entry_path: sql`coalesce(sessions.entry_path, excluded.entry_path)`,
        exit_path: sql`case when excluded.exit_path is not null and excluded.ended_at >= sessions.ended_at then excluded.exit_path else coalesce(sessions.exit_path, excluded.exit_path) end`,
      }),
    ),
  { pieces: true },
);

/** The batch's events folded into one tuple per session (events arrive in time order). */
export function sessionTuples(events: RecordedEvent[]): SessionTuple[] {
  const bySession = new Map<string, SessionTuple>();
  for (const e of events) {
    if (e.sessionId === null) continue;
    const key = `${e.websiteId}\u0000${e.sessionId}`;
    let row = bySession.get(key);
    if (!row) {
      row = [
        e.websiteId,
        e.sessionId,
        e.visitorId,
        e.occurredAt,
        e.occurredAt,
        0,
        0,
        0,
        null,
        null,
        null,
        ...SOURCE_COLUMNS.map(([, field]) => e.details?.[field] ?? null),
      ];
      bySession.set(key, row);
    }
    if (e.occurredAt < row[3]) row[3] = e.occurredAt;
    if (e.occurredAt > row[4]) row[4] = e.occurredAt;
    row[6] += 1;
    if (e.type === 'custom' && e.name !== null) row[7] += 1;
    if (e.type === 'pageview') {
      row[5] += 1;
      if (row[9] === null) {
        row[8] = e.hostname;
        row[9] = e.path;
      }
      row[10] = e.path;
    }
  }
  return [...bySession.values()];
}

/**
 * The batch's sessions upserted, with the session breakdowns' rollups and the visitors' session
 * counts (visitor_totals, upserted before) following them; `timezones` holds each website's zone.
 */
export async function updateSessions(trx: Kysely<Database>, events: RecordedEvent[], timezones: Map<string, string>): Promise<void> {
  for (const rows of chunks(sessionTuples(events), ROWS_PER_INSERT)) {
    const ids = rows.map(([websiteId, sessionId, visitorId, first, last]) => ({ websiteId, sessionId, visitorId, first, last }));
    await followSessionUpsert(trx, ids, timezones, async () => {
      await addSessionTotals(trx, sessionsWhere(ids), -1);
      await upsertSessions.all(trx, rows);
      await addSessionTotals(trx, sessionsWhere(ids), 1);
    });
  }
}
