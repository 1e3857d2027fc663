import { hashPassword } from '../../src/auth/passwords.ts';
import type { TestApp } from './app.ts';

export const TEST_PASSWORD = 'correct horse battery staple';

export interface TestSession {
  cookie: string;
  csrfToken: string;
  sessionId: string;
  /** Headers for a signed-in write from the dashboard's own page. */
  headers: Record<string, string>;
}

/** The session cookie (`name=value`) a response set. */
export function sessionCookieOf(setCookie: string | string[] | number | undefined): string {
  const lines = Array.isArray(setCookie) ? setCookie : [String(setCookie ?? '')];
  const line = lines.find((l) => l.startsWith('sightline_session='));
  if (!line) throw new Error(`no session cookie in ${JSON.stringify(setCookie)}`);
  return line.split(';')[0]!;
}

/** Gives the account a password and signs it in through POST /api/v1/dashboard/sign-in. */
export async function signInAs(t: TestApp, accountId: string, password = TEST_PASSWORD): Promise<TestSession> {
  await t.db.updateTable('accounts').set({ password_hash: await hashPassword(password) }).where('id', '=', accountId).execute();
  const { email } = await t.db.selectFrom('accounts').select('email').where('id', '=', accountId).executeTakeFirstOrThrow();
  const response = await t.request('POST', '/api/v1/dashboard/sign-in', { body: { email, password } });
  if (response.status !== 200) throw new Error(`sign-in failed: ${response.status} ${response.raw}`);
  const cookie = sessionCookieOf(response.headers['set-cookie']);
  const { csrfToken, sessionId } = response.body.data[0];
  return { cookie, csrfToken, sessionId, headers: { cookie, 'x-csrf-token': csrfToken } };
}
