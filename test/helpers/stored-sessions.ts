import { sql } from 'kysely';
import type { ClickHouse } from '../../src/db/clickhouse/clickhouse.ts';
import { SESSION_ATTRIBUTES, attributeColumn } from '../../src/db/clickhouse/session-attributes.ts';
import { sessionsTable } from '../../src/modules/stats/clickhouse/scope-ch.ts';
import { storedSessionsTable } from '../../src/modules/stats/clickhouse/stored-sessions-ch.ts';

// The sessions table written at ingestion (src/modules/events/clickhouse-sessions.ts) as plain
// rows, against the sessions grouped from the events: equal when every session is counted once.

const COLUMNS = ['visitor_id', 'pageviews', 'events', 'goals', 'entry_hostname', 'entry_path', 'exit_path', 'referrer_source', 'utm_campaign'] as const;
const SELECTED = sql`session_id, toString(started_ms) as started, toString(ended_ms) as ended, visitor_id, toUInt64(pageviews) as pageviews,
  toUInt64(events) as events, toUInt64(goals) as goals, entry_hostname, entry_path, exit_path, referrer_source, utm_campaign`;

/** The live sessions of the table, one row each. */
export function sessionsHeld(ch: ClickHouse, websiteId: string): Promise<Record<string, unknown>[]> {
  return ch.rows(sql`select ${SELECTED} from ${storedSessionsTable(websiteId, null, 'started', COLUMNS, sql`1 = 1`)} order by session_id`);
}

/** The sessions as the events give them. */
export function sessionsOfEvents(ch: ClickHouse, websiteId: string): Promise<Record<string, unknown>[]> {
  return ch.rows(sql`select ${SELECTED} from ${sessionsTable(websiteId, null, 'started', COLUMNS)} order by session_id`);
}

/** Sessions whose rows do not add up to one live row (a pair written twice, or half of one). */
export function sessionsNotOnce(ch: ClickHouse, websiteId: string): Promise<Record<string, unknown>[]> {
  return ch.rows(sql`select session_id, sum(sign) as live from sessions where website_id = ${websiteId} group by session_id having live != 1`);
}

/**
 * Events whose session attributes (`s_` columns) are not their session's as the events give it
 * (its first pageview's entry, its first event's source), with what they hold and what they
 * should; an event without a session must hold none.
 */
export function attributesNotAsSessions(ch: ClickHouse, websiteId: string): Promise<Record<string, unknown>[]> {
  const held = sql.join(SESSION_ATTRIBUTES.map((name) => sql.ref(attributeColumn(name))));
  const truth = sql.join(SESSION_ATTRIBUTES.map((name) => sql`${sql.ref(name)} as ${sql.ref(`t_${name}`)}`));
  const differs = sql.join(
    SESSION_ATTRIBUTES.map((name) => sql`ifNull(${sql.ref(attributeColumn(name))}, '\\0') != ifNull(${sql.ref(`t_${name}`)}, '\\0')`),
    sql` or `,
  );
  return ch.rows(sql`select id, session_id, ${held}, ${sql.join(SESSION_ATTRIBUTES.map((name) => sql.ref(`t_${name}`)))}
    from (select id, session_id, ifNull(session_id, '') as join_session, ${held} from events where website_id = ${websiteId})
    any left join (select session_id as join_session, ${truth} from ${sessionsTable(websiteId, null, 'started', [...SESSION_ATTRIBUTES])}) using join_session
    where ${differs}
    order by id`);
}
