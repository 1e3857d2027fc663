import { type Kysely, sql } from 'kysely';

// What the migrations that add a derived table do instead of filling it: they mark every website
// with events for a build, which the server runs in the background once it serves
// (src/modules/analytics/derived-build.ts). Frozen here, as the migrations need it, so a later
// change to the live code cannot change what an old migration does.

/**
 * derived_builds: a website whose derived tables are being built again from its raw events, in
 * the background. `phase` is 'clear-all' or 'clear' while its old rows are deleted, a bounded
 * number per transaction, then 'derive' while its visitors are derived a chunk at a time in the order of
 * their ids (the database's own order for text): visitors up to `cursor` are in the tables, the
 * rest not yet. Created by whichever comes first of migration 0023 and an older migration that
 * marks a build (one upgrade may run both).
 */
export async function createDerivedBuilds(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TABLE IF NOT EXISTS derived_builds (
    website_id text PRIMARY KEY REFERENCES websites(id) ON DELETE CASCADE,
    reason text NOT NULL,
    phase text NOT NULL,
    cursor text,
    visitors_done bigint NOT NULL DEFAULT 0,
    events_done bigint NOT NULL DEFAULT 0,
    events_total bigint,
    started_at text NOT NULL
  )`.execute(db);
}

/**
 * Marks every website that has events for a build of its derived tables (`reason` says which
 * migration asked). `clearAll`: the migration left sessions, session_buckets or visitor_totals
 * unlike their events, so the build clears those too before it derives (the phase 'clear-all');
 * otherwise it replaces their rows visitor by visitor. A website already marked keeps its mark,
 * made stronger when this one clears all.
 */
export async function markBuilds(db: Kysely<unknown>, reason: string, clearAll = false): Promise<void> {
  await createDerivedBuilds(db);
  await sql`insert into derived_builds (website_id, reason, phase, started_at)
    select w.id, ${reason}, ${clearAll ? 'clear-all' : 'clear'}, ${new Date().toISOString()} from websites w
    where exists (select 1 from events e where e.website_id = w.id)
    on conflict (website_id) do update set phase = excluded.phase where excluded.phase = 'clear-all'`.execute(db);
}
