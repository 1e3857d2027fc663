import type { NewEvent } from '../../src/modules/events/event.types.ts';
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { Role } from '../../src/auth/policy.ts';
import { createAccountWithToken } from '../../src/modules/account/account.service.ts';
import { issueToken } from '../../src/modules/access-tokens/access-tokens.service.ts';
import type { TestApp } from './app.ts';

// A fresh account per test keeps tests independent on a shared database.

export interface TestAccount {
  id: string;
  email: string;
  name: string;
  /** A full-access token (["*"], every website). */
  token: string;
}

const unique = () => randomBytes(5).toString('hex');

export async function createAccount(t: TestApp, name = 'Test User'): Promise<TestAccount> {
  const email = `user-${unique()}@example.com`;
  const { account, token } = await createAccountWithToken(t.db, email, name);
  return { ...account, token };
}

/** A token with narrower rights, written directly (the API path has its own tests). */
export async function createToken(
  t: TestApp,
  account: TestAccount,
  permissions: string[],
  websiteIds: string[] = [],
): Promise<string> {
  const { raw } = await issueToken(t.db, { accountId: account.id, name: 'narrow', permissions, websiteIds, expiresAt: null });
  return raw;
}

export async function createWebsite(t: TestApp, token: string, domain = `site-${unique()}.example.com`) {
  const response = await t.request('POST', '/api/v1/admin/websites', {
    token,
    body: { domain, timezone: 'Europe/Paris', name: 'Test site' },
  });
  expect(response.status, response.raw).toBe(200);
  return response.body.data[0] as { id: string; domain: string; trackingId: string };
}

/** Gives an account a role on a website (the team endpoints have their own tests). */
/** A new account and a website of its own. */
export async function ownerWithWebsite(t: TestApp) {
  const owner = await createAccount(t);
  const website = await createWebsite(t, owner.token);
  return { owner, website };
}

export async function addMember(t: TestApp, websiteId: string, accountId: string, role: Exclude<Role, 'owner'>) {
  await t.db
    .insertInto('website_members')
    .values({ website_id: websiteId, account_id: accountId, role, created_at: new Date().toISOString() })
    .execute();
}

export async function createApiKey(t: TestApp, token: string, websiteId: string, name = 'test key') {
  const response = await t.request('POST', `/api/v1/admin/websites/${websiteId}/apikeys`, { token, body: { name } });
  expect(response.status, response.raw).toBe(200);
  return response.body.data[0] as { id: string; key: string; displayKey: string };
}

/** Asserts the contract's error envelope with a status and a message matching `pattern`. */
export function expectError(response: { status: number; body: any; raw: string }, status: number, pattern?: RegExp) {
  expect(response.status, response.raw).toBe(status);
  expect(response.body).toMatchObject({ status: 'error', error: { code: status, message: expect.any(String) } });
  if (pattern) expect(response.body.error.message).toMatch(pattern);
}

export const UNKNOWN_ID = 'ffffffffffffffffffffffff';

/**
 * An event as an ingestion route would hand it to app.events.write: a page view on example.com
 * by default; tests override what they look at.
 */
export function newEvent(websiteId: string, visitorId: string, overrides: Partial<NewEvent> = {}): NewEvent {
  return {
    websiteId,
    type: 'pageview',
    name: null,
    visitorId,
    sessionId: `session-${visitorId}`,
    hostname: 'example.com',
    path: '/',
    referrer: null,
    country: null,
    browser: null,
    os: null,
    device: null,
    metadata: null,
    source: 'browser',
    occurredAt: new Date().toISOString(),
    ...overrides,
  };
}
