import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Engine } from '../../db/database.ts';
import { engineOf } from '../../db/engine.ts';
import type { Database } from '../../db/schema.ts';
import { BREAKDOWN_SPECS } from '../stats/breakdown-specs.ts';
import { SESSION_BREAKDOWNS, keyJson } from '../stats/sql/breakdown-keys-sql.ts';
import { addKeyedToProfiles, rebuildBreakdownProfiles, subtractKeyedFromProfiles } from './breakdown-profiles.ts';
import { addKeyed, deleteRows, deriveKeyed, keyedRows, snapshotKeyed, subtractKeyed } from './breakdown-rollup-tables.ts';

// Keeps the all-time session breakdowns (entry pages, exit pages, referrers, campaigns) in
// breakdown_visitors and breakdown_totals, beside the event breakdowns: per visitor and key, that
// visitor's sessions (in the `events` column, which the raw read counts as `count(*)`) and their
// pageviews; per key, its visitors, sessions and pageviews. A session's exit page and pageviews
// change with nearly every event of it, so ingestion moves the batch's sessions set-based: their
// rows as stored leave the rollups before the sessions' upsert, and their rows as upserted join
// them after it (`followSessionUpsert`), in the events' transaction. The session rebuild derives
// a whole website again; a website deletion deletes the rows.

/** The sessions' columns the keys read, besides the website, visitor and pageviews. */
const KEY_COLUMNS = [...new Set(SESSION_BREAKDOWNS.flatMap((kind) => Object.values(BREAKDOWN_SPECS[kind].keys)))];

/**
 * `with keyed as (...)`: per website, visitor, session breakdown and key, the sessions (`events`)
 * and pageviews among the sessions that `where` keeps (over the sessions table `s`).
 */
function keyedSessions(engine: Engine, where: RawBuilder<unknown>): RawBuilder<unknown> {
  const columns = ['website_id', 'visitor_id', 'pageviews', ...KEY_COLUMNS].map((column) => sql.ref(column));
  const branches = SESSION_BREAKDOWNS.map(
    (kind) => sql`select s.website_id, s.visitor_id, ${sql.lit(kind)} as breakdown, ${keyJson(engine, kind, 's')} as key, s.pageviews from scoped s`,
  );
  return keyedRows(sql`select ${sql.join(columns)} from sessions s where ${where}`, branches);
}

/** A website's sessions by id (the ids of one batch). */
export type SessionIds = { websiteId: string; sessionId: string }[];

/** `s.website_id = ? and s.session_id in (...)` per website of these sessions. */
export function sessionsWhere(sessions: SessionIds): RawBuilder<unknown> {
  const byWebsite = new Map<string, string[]>();
  for (const { websiteId, sessionId } of sessions) {
    const ids = byWebsite.get(websiteId);
    if (ids) ids.push(sessionId);
    else byWebsite.set(websiteId, [sessionId]);
  }
  const conditions = [...byWebsite].map(([websiteId, ids]) => sql`(s.website_id = ${websiteId} and s.session_id in (${sql.join(ids)}))`);
  return sql.join(conditions, sql` or `);
}

/**
 * Runs the upsert of these sessions with their rollup rows moved around it: the rows of the
 * sessions as stored go out before it, the rows of the sessions as upserted come in after it.
 * A new session has no rows to take out. breakdown_profiles follows both moves for the visitors
 * steady after the batch (visitor_totals is updated first). In the events' transaction.
 */
export async function followSessionUpsert(trx: Kysely<Database>, sessions: SessionIds, upsert: () => Promise<unknown>): Promise<void> {
  if (sessions.length === 0) return;
  const keyed = keyedSessions(engineOf(trx), sessionsWhere(sessions));
  const stored = await snapshotKeyed(trx, keyed);
  await subtractKeyedFromProfiles(trx, stored);
  await subtractKeyed(trx, stored);
  await upsert();
  const upserted = await snapshotKeyed(trx, keyed);
  await addKeyedToProfiles(trx, upserted);
  await addKeyed(trx, upserted);
}

/**
 * Derives the session breakdowns' rows of both tables from the stored sessions of one website, or
 * of all of them, into tables holding none of those rows: migration 0014's fill.
 */
export async function deriveSessionBreakdownRollups<DB>(db: Kysely<DB>, engine: Engine, websiteId: string | null): Promise<void> {
  const website = websiteId === null ? sql`true` : sql`s.website_id = ${websiteId}`;
  await deriveKeyed(db, keyedSessions(engine, website), websiteId, SESSION_BREAKDOWNS);
}

/** Replaces a website's session breakdown rows, and their profiles, with ones derived from its sessions (after a session rebuild). */
export async function rebuildSessionBreakdownRollups(db: Kysely<Database>, websiteId: string): Promise<void> {
  await deleteRows(db, websiteId, SESSION_BREAKDOWNS);
  await deriveSessionBreakdownRollups(db, engineOf(db), websiteId);
  await rebuildBreakdownProfiles(db, websiteId, SESSION_BREAKDOWNS);
}
