import type { Kysely } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import {
  findActiveApiKeyByDigest,
  findActiveSessionByDigest,
  findActiveTokenByDigest,
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
// counted the request against the client address.

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

/** The dashboard's session cookie, when the request carries no Authorization header. */
async function authenticateSession(db: Kysely<Database>, cookie: string, websiteId?: string): Promise<AuthOutcome> {
  if (!isSessionSecret(cookie)) return { failure: 'The session cookie is malformed; sign in again' };
  const row = await findActiveSessionByDigest(db, digestSecret(cookie), websiteId);
  const now = Date.now();
  if (!row || sessionExpired(row, now)) return { failure: 'The session has ended; sign in again' };
  if (needsTouch(row.last_seen_at, now)) await touchSession(db, row.id, new Date(now).toISOString());
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
    membership: websiteId === undefined ? null : { websiteId, role: row.role },
  };
}

/** `websiteId`: the well-formed website id of a website route, whose role a token lookup reads too. */
export async function authenticate(
  db: Kysely<Database>,
  header: string | undefined,
  websiteId?: string,
  sessionCookie?: string,
): Promise<AuthOutcome> {
  if (!header && sessionCookie) return authenticateSession(db, sessionCookie, websiteId);
  if (!header) return { failure: 'Authorization header is missing; send "Authorization: Bearer <token>"' };
  const match = /^Bearer +(\S+)\s*$/i.exec(header);
  if (!match) return { failure: 'Authorization header must be "Bearer <token>"' };
  const raw = match[1]!;
  const kind = parseCredential(raw);
  if (!kind) return { failure: 'The credential is malformed (expected a dft_ token or df_ key)' };

  const digest = digestCredential(raw);
  const now = Date.now();
  if (kind === 'token') {
    const row = await findActiveTokenByDigest(db, digest, websiteId);
    if (!row) return { failure: 'The token is unknown or has been revoked' };
    if (row.expires_at !== null && Date.parse(row.expires_at) <= now) return { failure: 'The token has expired' };
    if (needsTouch(row.last_used_at, now)) await touchToken(db, row.id, new Date(now).toISOString());
    return {
      principal: {
        kind: 'token',
        tokenId: row.id,
        accountId: row.account_id,
        permissions: JSON.parse(row.permissions) as string[],
        websiteIds: JSON.parse(row.website_ids) as string[],
      },
      membership: websiteId === undefined ? null : { websiteId, role: row.role },
    };
  }
  const row = await findActiveApiKeyByDigest(db, digest);
  if (!row) return { failure: 'The API key is unknown or has been revoked' };
  if (needsTouch(row.last_used_at, now)) await touchApiKey(db, row.id, new Date(now).toISOString());
  return {
    principal: { kind: 'apiKey', apiKeyId: row.id, websiteId: row.website_id, accountId: row.owner_id },
    membership: null,
  };
}
