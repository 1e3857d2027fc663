import type { Kysely } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import type { CachedCredential, PrincipalCache } from '../auth/principal-cache.ts';
import {
  findActiveApiKeyByDigest,
  findActiveSessionByDigest,
  findActiveTokenByDigest,
  findRole,
  touchApiKey,
  touchSession,
  touchToken,
} from '../auth/credentials.repository.ts';
import { ALL } from '../auth/permissions.ts';
import { csrfTokenFor, digestSecret, isSessionSecret, sessionExpired } from '../auth/sessions.ts';
import { digestCredential, parseCredential } from '../auth/tokens.ts';
import type { Database } from '../db/schema.ts';

// Bearer -> format and checksum -> digest lookup -> request.principal; without an Authorization
// header, the dashboard's session cookie the same way. It never answers by itself: the route guard turns a missing principal into the 401, after the rate limiter has
// counted the request against the client address. What a lookup read is kept in the principal
// cache (src/auth/principal-cache.ts), which forgets it when a credential table changes; expiry
// is checked on every request against the kept row.

const TOUCH_INTERVAL_MS = 60_000;

/** The account's role on the website a route names, read in the same statement as the token. */
export interface Membership {
  websiteId: string;
  role: string | null;
}

export type AuthOutcome = { principal: Principal; membership: Membership | null } | { failure: string };

function needsTouch(lastUsedAt: string | null, now: number): boolean {
  return lastUsedAt === null || now - Date.parse(lastUsedAt) >= TOUCH_INTERVAL_MS;
}

/**
 * The credential's row (and, with a websiteId, the account's role there) from the cache, or read
 * by `lookup` and kept. `lookup` returns the row with the role it read along, or undefined.
 */
async function credential<Row extends object>(
  cache: PrincipalCache,
  digest: string,
  websiteId: string | undefined,
  lookup: () => Promise<(Row & { role: string | null }) | undefined>,
): Promise<CachedCredential<Row> | undefined> {
  const generation = cache.generation();
  const cached = cache.find<Row>(digest, generation);
  if (cached) return cached;
  const found = await lookup();
  if (!found) return undefined;
  const { role, ...row } = found;
  const roles = new Map<string, string | null>(websiteId === undefined ? [] : [[websiteId, role]]);
  const fresh = { generation, row: row as unknown as Row, roles };
  cache.remember(digest, fresh);
  return fresh;
}

/** The account's role on the route's website: kept with the credential, else read and kept. */
async function membershipOf(
  db: Kysely<Database>,
  cache: PrincipalCache,
  entry: CachedCredential<object>,
  accountId: string,
  websiteId: string | undefined,
): Promise<Membership | null> {
  if (websiteId === undefined) return null;
  if (entry.roles.has(websiteId)) return { websiteId, role: entry.roles.get(websiteId) ?? null };
  const role = (await findRole(db, accountId, websiteId)) ?? null;
  cache.rememberRole(entry, websiteId, role);
  return { websiteId, role };
}

/** The dashboard's session cookie, when the request carries no Authorization header. */
async function authenticateSession(db: Kysely<Database>, cache: PrincipalCache, cookie: string, websiteId?: string): Promise<AuthOutcome> {
  if (!isSessionSecret(cookie)) return { failure: 'The session cookie is malformed; sign in again' };
  const digest = digestSecret(cookie);
  const entry = await credential(cache, digest, websiteId, () => findActiveSessionByDigest(db, digest, websiteId));
  const now = Date.now();
  if (!entry || sessionExpired(entry.row, now)) return { failure: 'The session has ended; sign in again' };
  const row = entry.row;
  if (needsTouch(row.last_seen_at, now)) {
    const at = new Date(now).toISOString();
    await touchSession(db, row.id, at);
    row.last_seen_at = at;
  }
  return {
    principal: {
      kind: 'session',
      sessionId: row.id,
      accountId: row.account_id,
      permissions: [ALL],
      websiteIds: [],
      signedInAt: row.signed_in_at,
      csrfToken: csrfTokenFor(cookie),
    },
    membership: await membershipOf(db, cache, entry, row.account_id, websiteId),
  };
}

/** `websiteId`: the well-formed website id of a website route, whose role a token lookup reads too. */
export async function authenticate(
  db: Kysely<Database>,
  cache: PrincipalCache,
  header: string | undefined,
  websiteId?: string,
  sessionCookie?: string,
): Promise<AuthOutcome> {
  if (!header && sessionCookie) return authenticateSession(db, cache, sessionCookie, websiteId);
  if (!header) return { failure: 'Authorization header is missing; send "Authorization: Bearer <token>"' };
  const match = /^Bearer +(\S+)\s*$/i.exec(header);
  if (!match) return { failure: 'Authorization header must be "Bearer <token>"' };
  const raw = match[1]!;
  const kind = parseCredential(raw);
  if (!kind) return { failure: 'The credential is malformed (expected a dft_ token or df_ key)' };

  const digest = digestCredential(raw);
  const now = Date.now();
  if (kind === 'token') {
    const entry = await credential(cache, digest, websiteId, () => findActiveTokenByDigest(db, digest, websiteId));
    if (!entry) return { failure: 'The token is unknown or has been revoked' };
    const row = entry.row;
    if (row.expires_at !== null && Date.parse(row.expires_at) <= now) return { failure: 'The token has expired' };
    if (needsTouch(row.last_used_at, now)) {
      const at = new Date(now).toISOString();
      await touchToken(db, row.id, at);
      row.last_used_at = at;
    }
    return {
      principal: {
        kind: 'token',
        tokenId: row.id,
        accountId: row.account_id,
        permissions: JSON.parse(row.permissions) as string[],
        websiteIds: JSON.parse(row.website_ids) as string[],
      },
      membership: await membershipOf(db, cache, entry, row.account_id, websiteId),
    };
  }
  // A key has no role to read along (API_KEY_ROLE): it is the website's, which the guard checks.
  const entry = await credential(cache, digest, undefined, async () => {
    const found = await findActiveApiKeyByDigest(db, digest);
    return found && { ...found, role: null };
  });
  const row = entry?.row;
  if (!row) return { failure: 'The API key is unknown or has been revoked' };
  if (needsTouch(row.last_used_at, now)) {
    const at = new Date(now).toISOString();
    await touchApiKey(db, row.id, at);
    row.last_used_at = at;
  }
  return {
    principal: { kind: 'apiKey', apiKeyId: row.id, websiteId: row.website_id, accountId: row.owner_id },
    membership: null,
  };
}
