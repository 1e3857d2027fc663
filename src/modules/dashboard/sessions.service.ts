import { type Kysely, sql } from 'kysely';
import { hashPassword, verifyPassword } from '../../auth/passwords.ts';
import type { SessionPrincipal } from '../../auth/principal.ts';
import { SESSION_LIFETIME_MS, csrfTokenFor, digestSecret, generateSessionSecret, sessionExpired } from '../../auth/sessions.ts';
import { isPostgres } from '../../db/engine.ts';
import type { Database } from '../../db/schema.ts';
import { conflict, forbidden, invalidField, notFound, unauthorized } from '../../errors.ts';
import { normaliseEmail } from '../../lib/formats.ts';
import { newId } from '../../lib/ids.ts';
import * as accounts from '../account/account.repository.ts';
import { presentDashboardSession, presentSessionInfo } from './dashboard.presenter.ts';
import * as repo from './sessions.repository.ts';

/** What signing in yields: the cookie's value (only ever in Set-Cookie) and the page's view of it. */
export interface StartedSession {
  secret: string;
  info: ReturnType<typeof presentSessionInfo>;
}

const WRONG_PAIR = 'Wrong e-mail or password';
// Ended sessions are kept a while for the sessions list's sake, then deleted.
const ENDED_SESSION_RETENTION_MS = 30 * 24 * 3600_000;

function requireEmail(value: string, field = 'body.email'): string {
  const email = normaliseEmail(value);
  if (!email) throw invalidField(field, 'must be an e-mail address');
  return email;
}

/** Opens a session for the account (two statements: run it inside a transaction). */
export async function startSession(db: Kysely<Database>, account: accounts.AccountRow, userAgent: string | undefined): Promise<StartedSession> {
  const secret = generateSessionSecret();
  const now = Date.now();
  const at = new Date(now).toISOString();
  const row: repo.DashboardSessionRow = {
    id: newId(),
    account_id: account.id,
    digest: digestSecret(secret),
    user_agent: userAgent?.slice(0, 300) ?? null,
    created_at: at,
    signed_in_at: at,
    last_seen_at: at,
    expires_at: new Date(now + SESSION_LIFETIME_MS).toISOString(),
    revoked_at: null,
  };
  await repo.deleteEndedSessions(db, account.id, new Date(now - ENDED_SESSION_RETENTION_MS).toISOString());
  await repo.insertSession(db, row);
  return { secret, info: presentSessionInfo(account, row, csrfTokenFor(secret)) };
}

/** Creates an account with a password (setup, open sign-up, an accepted invitation). */
export async function insertAccountWithPassword(db: Kysely<Database>, input: { email: string; name: string; passwordHash: string }) {
  const now = new Date().toISOString();
  const account: accounts.AccountRow = {
    id: newId(),
    email: input.email,
    name: input.name.trim(),
    plan: 'self-hosted',
    created_at: now,
    updated_at: now,
    password_hash: input.passwordHash,
  };
  await accounts.insertAccount(db, account);
  return account;
}

export async function isSetupRequired(db: Kysely<Database>): Promise<boolean> {
  return (await accounts.countAccounts(db)) === 0;
}

/** The first-run setup: the first account, only while none exists. */
export async function setUp(db: Kysely<Database>, input: { email: string; name: string; password: string }, userAgent?: string) {
  const email = requireEmail(input.email);
  const passwordHash = await hashPassword(input.password);
  return db.transaction().execute(async (trx) => {
    // Two setups at once on PostgreSQL: the second waits, then finds the first account.
    if (isPostgres(trx)) await sql`SELECT pg_advisory_xact_lock(hashtext('sightline-first-run-setup'))`.execute(trx);
    if (!(await isSetupRequired(trx))) throw conflict('Setup is already done: an account exists, so sign in instead');
    const account = await insertAccountWithPassword(trx, { email, name: input.name, passwordHash });
    return startSession(trx, account, userAgent);
  });
}

/** Open sign-up (SIGNUP=open). */
export async function signUp(db: Kysely<Database>, input: { email: string; name: string; password: string }, userAgent?: string) {
  const email = requireEmail(input.email);
  const passwordHash = await hashPassword(input.password);
  return db.transaction().execute(async (trx) => {
    if (await accounts.findAccountByEmail(trx, email)) throw conflict(`An account with the e-mail ${email} already exists; sign in instead`);
    const account = await insertAccountWithPassword(trx, { email, name: input.name, passwordHash });
    return startSession(trx, account, userAgent);
  });
}

export async function signIn(db: Kysely<Database>, input: { email: string; password: string }, userAgent?: string) {
  const email = normaliseEmail(input.email);
  const account = email ? await accounts.findAccountByEmail(db, email) : undefined;
  // An unknown address costs the same hash as a known one, so timing does not tell them apart.
  if (!(await verifyPassword(input.password, account?.password_hash ?? null)) || !account) throw unauthorized(WRONG_PAIR);
  return db.transaction().execute((trx) => startSession(trx, account, userAgent));
}

async function accountOf(db: Kysely<Database>, accountId: string): Promise<accounts.AccountRow> {
  const account = await accounts.findAccount(db, accountId);
  if (!account) throw unauthorized('The account no longer exists');
  return account;
}

export async function describeSession(db: Kysely<Database>, caller: SessionPrincipal) {
  const account = await accountOf(db, caller.accountId);
  const row = await repo.findSession(db, caller.accountId, caller.sessionId);
  if (!row) throw unauthorized('The session has ended; sign in again');
  return presentSessionInfo(account, row, caller.csrfToken);
}

export async function signOut(db: Kysely<Database>, caller: SessionPrincipal): Promise<void> {
  await repo.revokeSession(db, caller.accountId, caller.sessionId, new Date().toISOString());
}

export async function signOutEverywhere(db: Kysely<Database>, caller: SessionPrincipal): Promise<void> {
  await repo.revokeAllSessions(db, caller.accountId, new Date().toISOString());
}

export async function listSessions(db: Kysely<Database>, caller: SessionPrincipal) {
  const now = Date.now();
  const rows = await repo.listSessions(db, caller.accountId);
  return rows.filter((row) => !sessionExpired(row, now)).map((row) => presentDashboardSession(row, caller.sessionId));
}

/** Revokes one of the caller's sessions; whether it was the current one (its cookie goes too). */
export async function revokeSession(db: Kysely<Database>, caller: SessionPrincipal, sessionId: string): Promise<boolean> {
  if (!(await repo.revokeSession(db, caller.accountId, sessionId, new Date().toISOString()))) throw notFound('Session not found');
  return sessionId === caller.sessionId;
}

async function checkPassword(db: Kysely<Database>, accountId: string, password: string, field: string): Promise<void> {
  if (!(await verifyPassword(password, await repo.findPasswordHash(db, accountId)))) throw invalidField(field, 'is not the current password');
}

/** A new password; every other session of the account ends. */
export async function changePassword(db: Kysely<Database>, caller: SessionPrincipal, input: { currentPassword: string; newPassword: string }) {
  await checkPassword(db, caller.accountId, input.currentPassword, 'body.currentPassword');
  const hash = await hashPassword(input.newPassword);
  await db.transaction().execute(async (trx) => {
    const at = new Date().toISOString();
    await repo.setPasswordHash(trx, caller.accountId, hash, at);
    await repo.revokeAllSessions(trx, caller.accountId, at, caller.sessionId);
  });
}

/** The password again, for what needs a recent sign-in (deleting a website). */
export async function reauthenticate(db: Kysely<Database>, caller: SessionPrincipal, password: string) {
  await checkPassword(db, caller.accountId, password, 'body.password');
  await repo.markSignedIn(db, caller.sessionId, new Date().toISOString());
  return describeSession(db, caller);
}

export function refuseSignUp(): never {
  throw forbidden('Sign-up is closed on this server: ask an owner for an invitation (SIGNUP=open opens it)');
}
