import type { Kysely } from 'kysely';
import { ALL } from '../../auth/permissions.ts';
import type { Principal } from '../../auth/principal.ts';
import type { Limits } from '../../config.ts';
import type { Database } from '../../db/schema.ts';
import { notFound } from '../../errors.ts';
import { newId } from '../../lib/ids.ts';
import { issueToken } from '../access-tokens/access-tokens.service.ts';
import { presentAccount } from './account.presenter.ts';
import * as repo from './account.repository.ts';
import type { AccountView } from './account.schemas.ts';

/** A df_ key answers for its website's owner and says which website it belongs to. */
export async function getAccount(db: Kysely<Database>, limits: Limits, principal: Principal): Promise<AccountView> {
  const row = await repo.findAccount(db, principal.accountId);
  if (!row) throw notFound('Account not found');
  return presentAccount(row, limits, principal.kind === 'apiKey' ? principal.websiteId : undefined);
}

export async function renameAccount(db: Kysely<Database>, limits: Limits, accountId: string, name: string): Promise<AccountView> {
  return db.transaction().execute(async (trx) => {
    await repo.renameAccount(trx, accountId, name, new Date().toISOString());
    const row = await repo.findAccount(trx, accountId);
    if (!row) throw notFound('Account not found');
    return presentAccount(row, limits);
  });
}

export class AccountExistsError extends Error {}

/** First-account bootstrap (CLI): the account and a full-access token, in one transaction. */
export async function createAccountWithToken(db: Kysely<Database>, email: string, name: string) {
  return db.transaction().execute(async (trx) => {
    if (await repo.findAccountByEmail(trx, email)) throw new AccountExistsError(`An account with the email ${email} already exists`);
    const now = new Date().toISOString();
    const account: repo.AccountRow = { id: newId(), email, name, plan: 'self-hosted', created_at: now, updated_at: now, password_hash: null };
    await repo.insertAccount(trx, account);
    const { raw } = await issueToken(trx, {
      accountId: account.id,
      name: 'Admin token (created by the CLI)',
      permissions: [ALL],
      websiteIds: [],
      expiresAt: null,
    });
    return { account: { id: account.id, email, name }, token: raw };
  });
}
