import type { Kysely, Selectable } from 'kysely';
import type { Database, PasswordResetsTable } from '../../db/schema.ts';

export type PasswordResetRow = Selectable<PasswordResetsTable>;

export async function insertPasswordReset(db: Kysely<Database>, row: PasswordResetRow): Promise<void> {
  await db.insertInto('password_resets').values(row).execute();
}

/** The account's earlier reset links, used or not: a new request leaves only the newest one. */
export async function deletePasswordResets(db: Kysely<Database>, accountId: string): Promise<void> {
  await db.deleteFrom('password_resets').where('account_id', '=', accountId).execute();
}

/** The account's reset mail not sent yet: its link no longer works once a newer one is asked for. */
export async function deletePendingAccountMail(db: Kysely<Database>, accountId: string): Promise<void> {
  await db.deleteFrom('mail_outbox').where('account_id', '=', accountId).where('status', '=', 'pending').execute();
}

export async function findPasswordReset(db: Kysely<Database>, digest: string): Promise<PasswordResetRow | undefined> {
  return db.selectFrom('password_resets').selectAll().where('digest', '=', digest).executeTakeFirst();
}

/** Marks the link used, unless it already is: whether this call used it (two confirms at once: one wins). */
export async function markPasswordResetUsed(db: Kysely<Database>, id: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('password_resets')
    .set({ used_at: at })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
