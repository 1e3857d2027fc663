import type { Kysely, Selectable } from 'kysely';
import type { DashboardSessionsTable, Database } from '../../db/schema.ts';

export type DashboardSessionRow = Selectable<DashboardSessionsTable>;

export async function insertSession(db: Kysely<Database>, row: DashboardSessionRow): Promise<void> {
  await db.insertInto('dashboard_sessions').values(row).execute();
}

export async function findSession(db: Kysely<Database>, accountId: string, id: string): Promise<DashboardSessionRow | undefined> {
  return db
    .selectFrom('dashboard_sessions')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
}

/** The account's sessions not revoked (expired ones are filtered by the caller, which knows the clock). */
export async function listSessions(db: Kysely<Database>, accountId: string): Promise<DashboardSessionRow[]> {
  return db
    .selectFrom('dashboard_sessions')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .orderBy('last_seen_at', 'desc')
    .execute();
}

export async function revokeSession(db: Kysely<Database>, accountId: string, id: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('dashboard_sessions')
    .set({ revoked_at: at })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Every session of the account, except `keep` when given. */
export async function revokeAllSessions(db: Kysely<Database>, accountId: string, at: string, keep?: string): Promise<void> {
  let query = db.updateTable('dashboard_sessions').set({ revoked_at: at }).where('account_id', '=', accountId).where('revoked_at', 'is', null);
  if (keep) query = query.where('id', '!=', keep);
  await query.execute();
}

export async function markSignedIn(db: Kysely<Database>, id: string, at: string): Promise<void> {
  await db.updateTable('dashboard_sessions').set({ signed_in_at: at, last_seen_at: at }).where('id', '=', id).execute();
}

/** Sessions that ended long ago are deleted as new ones start, so the table does not grow forever. */
export async function deleteEndedSessions(db: Kysely<Database>, accountId: string, before: string): Promise<void> {
  await db
    .deleteFrom('dashboard_sessions')
    .where('account_id', '=', accountId)
    .where((eb) => eb.or([eb('expires_at', '<', before), eb('revoked_at', '<', before)]))
    .execute();
}

export async function findPasswordHash(db: Kysely<Database>, accountId: string): Promise<string | null> {
  const row = await db.selectFrom('accounts').select('password_hash').where('id', '=', accountId).executeTakeFirst();
  return row?.password_hash ?? null;
}

export async function setPasswordHash(db: Kysely<Database>, accountId: string, hash: string, at: string): Promise<void> {
  await db.updateTable('accounts').set({ password_hash: hash, updated_at: at }).where('id', '=', accountId).execute();
}
