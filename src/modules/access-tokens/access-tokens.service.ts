import type { Kysely } from 'kysely';
import { ALL, isSubset } from '../../auth/permissions.ts';
import type { AccountPrincipal } from '../../auth/principal.ts';
import { digestCredential, displayKey, generateCredential } from '../../auth/tokens.ts';
import { lockAccount } from '../../db/locks.ts';
import type { Database } from '../../db/schema.ts';
import { badRequest, forbidden, invalidField, notFound } from '../../errors.ts';
import { newId } from '../../lib/ids.ts';
import { accessibleWebsiteIds } from '../websites/websites.repository.ts';
import { presentAccessToken } from './access-tokens.presenter.ts';
import * as repo from './access-tokens.repository.ts';
import type { CreateAccessTokenInput } from './access-tokens.schemas.ts';

export async function listAccessTokens(db: Kysely<Database>, accountId: string) {
  return (await repo.listActiveTokens(db, accountId)).map(presentAccessToken);
}

/** A new token can never grant more than the token that creates it (Immich's isGranted rule). */
function exceeds(caller: AccountPrincipal, permissions: string[], websiteIds: string[]): 'permissions' | 'websites' | null {
  if (!isSubset(permissions, caller.permissions)) return 'permissions';
  const callerWebsites = caller.websiteIds;
  const wider = callerWebsites.length > 0 && (websiteIds.length === 0 || websiteIds.some((id) => !callerWebsites.includes(id)));
  return wider ? 'websites' : null;
}

function assertWithinCreator(creator: AccountPrincipal, permissions: string[], websiteIds: string[]): void {
  const excess = exceeds(creator, permissions, websiteIds);
  if (excess === 'permissions') throw forbidden('A token cannot grant permissions that the token creating it does not hold');
  if (excess === 'websites') throw forbidden('A token cannot reach websites that the token creating it cannot reach');
}

export interface IssueTokenOptions {
  accountId: string;
  name: string;
  permissions: string[];
  websiteIds: string[];
  expiresAt: string | null;
}

/** Writes a new token and returns its row and raw value (the only time the raw value exists). */
export async function issueToken(db: Kysely<Database>, options: IssueTokenOptions) {
  const raw = generateCredential('token');
  const row: repo.AccessTokenRow = {
    id: newId(),
    account_id: options.accountId,
    name: options.name,
    digest: digestCredential(raw),
    display_key: displayKey(raw),
    permissions: JSON.stringify(options.permissions),
    website_ids: JSON.stringify(options.websiteIds),
    expires_at: options.expiresAt,
    last_used_at: null,
    revoked_at: null,
    created_at: new Date().toISOString(),
  };
  await repo.insertToken(db, row);
  return { row, raw };
}

/**
 * Every listed website must be one of the account's that the creating token reaches. One 403
 * answer for an unknown id, another account's website and one the creator cannot reach, so the
 * answer tells nothing about ids outside the caller's reach.
 */
async function assertReachableWebsites(db: Kysely<Database>, creator: AccountPrincipal, websiteIds: string[]): Promise<void> {
  if (websiteIds.length === 0) return;
  const reachable = await accessibleWebsiteIds(db, creator.accountId);
  const creatorWebsites = creator.websiteIds;
  websiteIds.forEach((id, i) => {
    if (!reachable.has(id) || (creatorWebsites.length > 0 && !creatorWebsites.includes(id))) {
      throw forbidden(`body.websiteIds[${i}]: is not a website of this account that this token can reach`);
    }
  });
}

/** Rules of the body that are not about rights; checked after them (403 before 400). */
function expiryOf(input: CreateAccessTokenInput, permissions: string[]): string | null {
  if (permissions.length === 0) throw invalidField('body.permissions', 'must name at least one permission (or omit it for all)');
  if (input.expiresAt === undefined) return null;
  const at = Date.parse(input.expiresAt);
  if (!(at > Date.now())) throw invalidField('body.expiresAt', 'must be in the future');
  return new Date(at).toISOString();
}

export async function createAccessToken(db: Kysely<Database>, creator: AccountPrincipal, limit: number, input: CreateAccessTokenInput) {
  const permissions = input.permissions ?? [ALL];
  const websiteIds = input.websiteIds ?? [];

  return db.transaction().execute(async (trx) => {
    await lockAccount(trx, creator.accountId);
    await assertReachableWebsites(trx, creator, websiteIds);
    assertWithinCreator(creator, permissions, websiteIds);
    const expiresAt = expiryOf(input, permissions);
    if ((await repo.countActiveTokens(trx, creator.accountId)) >= limit) {
      throw badRequest(`Token limit reached: an account may have at most ${limit} tokens; revoke one first`);
    }
    const { row, raw } = await issueToken(trx, {
      accountId: creator.accountId,
      name: input.name ?? 'API token',
      permissions,
      websiteIds,
      expiresAt,
    });
    return { ...presentAccessToken(row), token: raw };
  });
}

/** A narrow token cannot revoke a wider one (say, the owner's full-access token). */
export async function revokeAccessToken(db: Kysely<Database>, caller: AccountPrincipal, tokenId: string) {
  return db.transaction().execute(async (trx) => {
    const target = await repo.findActiveToken(trx, caller.accountId, tokenId);
    if (!target) throw notFound('Token not found');
    if (exceeds(caller, JSON.parse(target.permissions), JSON.parse(target.website_ids))) {
      throw forbidden('A token cannot revoke a token with wider rights than its own');
    }
    await repo.revokeToken(trx, caller.accountId, tokenId, new Date().toISOString());
    return { message: 'Token revoked' };
  });
}
