import type { Kysely, Selectable } from 'kysely';
import type { AccountsTable, Database } from '../../db/schema.ts';

export type AccountRow = Selectable<AccountsTable>;

export async function findAccount(db: Kysely<Database>, id: string): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findAccountByEmail(db: Kysely<Database>, email: string): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').selectAll().where('email', '=', email).executeTakeFirst();
}

export async function insertAccount(db: Kysely<Database>, row: AccountRow): Promise<void> {
  await db.insertInto('accounts').values(row).execute();
}

export async function renameAccount(db: Kysely<Database>, id: string, name: string, at: string): Promise<void> {
  await db.updateTable('accounts').set({ name, updated_at: at }).where('id', '=', id).execute();
}

export async function countAccounts(db: Kysely<Database>): Promise<number> {
  const row = await db.selectFrom('accounts').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}
