import { randomBytes } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { afterAll, expect, it } from 'vitest';
import { digestSecret } from '../src/auth/sessions.ts';
import { isPostgres } from '../src/db/engine.ts';
import type { Database } from '../src/db/schema.ts';
import { LINK_MAIL_TEXT_REMOVED } from '../src/mail/outbox-worker.ts';
import { mailTextToSend } from '../src/mail/sealed-text.ts';
import { type TestApp, useTestApp } from './helpers/app.ts';
import { TEST_PASSWORD, sessionCookieOf, signInAs } from './helpers/dashboard-session.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { createAccount, createWebsite, expectError } from './helpers/factories.ts';
import { type ReceivedMail, startSmtpInbox } from './helpers/smtp-inbox.ts';

// The dashboard's mail (password-reset links, invitation links) goes through a real SMTP server
// (smtp-server on 127.0.0.1) and the real nodemailer transport, sent by the outbox worker.
// Messages are told apart by recipient: every test has accounts and addresses of its own.

const D = '/api/v1/dashboard';
const ADMIN = '/api/v1/admin';
const PUBLIC_URL = 'https://analytics.example.com';
const NEW_PASSWORD = 'a brand new password';

const smtp = await startSmtpInbox();
const SMTP_URL = smtp.url;
afterAll(() => smtp.close());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const mailTo = (email: string) => smtp.mailsTo(email);

async function waitForMail(email: string, count = 1): Promise<ReceivedMail[]> {
  const deadline = Date.now() + 5000;
  while (mailTo(email).length < count) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${count} e-mail(s) to ${email}`);
    await sleep(20);
  }
  return mailTo(email);
}

function linkIn(mail: Pick<ReceivedMail, 'text'>, page: 'reset-password' | 'invite'): string {
  const escaped = PUBLIC_URL.replace(/\./g, '\\.');
  const match = new RegExp(`${escaped}/${page}#([0-9A-Za-z]{43})(?![0-9A-Za-z])`).exec(mail.text);
  if (!match) throw new Error(`no ${page} link in ${JSON.stringify(mail.text)}`);
  return match[1]!;
}

/** Every row of every table, as one text, to search for what must never be stored. */
async function wholeDatabase(db: Kysely<Database>): Promise<string> {
  const tables = isPostgres(db)
    ? await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(db)
    : await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(db);
  const dumps: string[] = [];
  for (const { name } of tables.rows) dumps.push(JSON.stringify((await sql`select * from ${sql.table(name)}`.execute(db)).rows));
  return dumps.join('\n');
}

async function expectNowhere(t: TestApp, token: string) {
  expect(t.logLines.join('\n')).not.toContain(token);
  const stored = await wholeDatabase(t.db);
  expect(stored).not.toContain(token);
  // The search does reach the outbox: the sent mail is there, without its text.
  expect(stored).toContain(LINK_MAIL_TEXT_REMOVED);
  return stored;
}

/** Waits until the worker has sent every mail queued to the address (and so replaced its text). */
async function waitForSent(t: TestApp, email: string) {
  const deadline = Date.now() + 5000;
  for (;;) {
    const rows = await t.db.selectFrom('mail_outbox').select('status').where('to_address', '=', email).execute();
    if (rows.length > 0 && rows.every((row) => row.status === 'sent')) break;
    if (Date.now() > deadline) throw new Error(`the mail to ${email} was not recorded as sent`);
    await sleep(20);
  }
  const texts = await t.db.selectFrom('mail_outbox').select('text').where('to_address', '=', email).execute();
  expect(texts.map((row) => row.text)).toEqual(texts.map(() => LINK_MAIL_TEXT_REMOVED));
}

/** A trigger that makes every insert into password_resets fail (a database refusing the write). */
async function refuseNewResetLinks(db: Kysely<Database>, refuse: boolean): Promise<void> {
  if (isPostgres(db)) {
    if (refuse) {
      await sql`create function refuse_reset_link() returns trigger language plpgsql as $$ begin raise exception 'refused by the test'; end $$`.execute(db);
      await sql`create trigger refuse_reset_link before insert on password_resets for each row execute function refuse_reset_link()`.execute(db);
    } else {
      await sql`drop function refuse_reset_link() cascade`.execute(db);
    }
  } else if (refuse) {
    await sql`create trigger refuse_reset_link before insert on password_resets begin select raise(abort, 'refused by the test'); end`.execute(db);
  } else {
    await sql`drop trigger refuse_reset_link`.execute(db);
  }
}

const emailOf = async (t: TestApp, accountId: string) =>
  (await t.db.selectFrom('accounts').select('email').where('id', '=', accountId).executeTakeFirstOrThrow()).email;
const signIn = (t: TestApp, email: string, password: string) => t.request('POST', `${D}/sign-in`, { body: { email, password } });
const newAddress = () => `invited-${randomBytes(5).toString('hex')}@example.com`;

describeEachEngine('dashboard password reset by mail', (engine) => {
  const t = useTestApp(engine, {
    smtpUrl: SMTP_URL,
    publicUrl: PUBLIC_URL,
    signInLimit: { perAccount: 1000, perAddress: 1000, windowMs: 60_000 },
  });

  it('mails a link that sets a new password once: the old password stops working and every session ends', async () => {
    const owner = await createAccount(t, 'Ada Lovelace');
    const email = await emailOf(t, owner.id);
    const first = await signInAs(t, owner.id);
    const second = await signInAs(t, owner.id);

    const requested = await t.request('POST', `${D}/password-reset`, { body: { email: email.toUpperCase() } });
    expect(requested.status, requested.raw).toBe(200);
    expect(requested.body.data[0].message).toMatch(/If an account has this e-mail address/);
    const [mail] = await waitForMail(email);
    expect(mail!.subject).toBe('[Sightline] Reset your password');
    expect(mail!.text).toContain('Hello Ada Lovelace');
    const token = linkIn(mail!, 'reset-password');

    // Only the digest is stored, with an expiry one hour out.
    const [reset] = await t.db.selectFrom('password_resets').selectAll().where('account_id', '=', owner.id).execute();
    expect(reset).toMatchObject({ digest: digestSecret(token), used_at: null });
    const lifetime = Date.parse(reset!.expires_at) - Date.parse(reset!.created_at);
    expect(lifetime).toBe(3600_000);
    const [outbox] = await t.db.selectFrom('mail_outbox').selectAll().where('account_id', '=', owner.id).execute();
    expect(outbox).toMatchObject({ website_id: null, account_id: owner.id, to_address: email });

    expectError(await t.request('POST', `${D}/password-reset/confirm`, { body: { token, password: 'short' } }), 400, /body\.password/);
    const confirmed = await t.request('POST', `${D}/password-reset/confirm`, { body: { token, password: NEW_PASSWORD } });
    expect(confirmed.status, confirmed.raw).toBe(200);

    expectError(await signIn(t, email, TEST_PASSWORD), 401);
    expect((await signIn(t, email, NEW_PASSWORD)).status).toBe(200);
    for (const session of [first, second]) expectError(await t.request('GET', `${D}/sessions`, { headers: { cookie: session.cookie } }), 401);

    // Used once, it is refused.
    expectError(await t.request('POST', `${D}/password-reset/confirm`, { body: { token, password: 'yet another password' } }), 400, /body\.token/);
    expect((await signIn(t, email, NEW_PASSWORD)).status).toBe(200);

    // Once sent, the mail's text is not kept: the raw token is in no table and no log line.
    await waitForSent(t, email);
    expect(await expectNowhere(t, token)).toContain(digestSecret(token));
  });

  it('refuses an expired link, and a link a newer request replaced', async () => {
    const owner = await createAccount(t);
    const email = await emailOf(t, owner.id);
    await signInAs(t, owner.id);
    expect((await t.request('POST', `${D}/password-reset`, { body: { email } })).status).toBe(200);
    const older = linkIn((await waitForMail(email, 1))[0]!, 'reset-password');
    expect((await t.request('POST', `${D}/password-reset`, { body: { email } })).status).toBe(200);
    const newer = linkIn((await waitForMail(email, 2))[1]!, 'reset-password');
    expect(newer).not.toBe(older);

    expectError(await t.request('POST', `${D}/password-reset/confirm`, { body: { token: older, password: NEW_PASSWORD } }), 400, /body\.token/);
    await t.db.updateTable('password_resets').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('account_id', '=', owner.id).execute();
    expectError(await t.request('POST', `${D}/password-reset/confirm`, { body: { token: newer, password: NEW_PASSWORD } }), 400, /body\.token/);
    expect((await signIn(t, email, TEST_PASSWORD)).status).toBe(200);
  });

  it('answers an unknown address exactly as a known one, and mails nothing', async () => {
    const owner = await createAccount(t);
    const email = await emailOf(t, owner.id);
    const known = await t.request('POST', `${D}/password-reset`, { body: { email } });
    await waitForMail(email);
    const nobody = newAddress();
    const resetsBefore = await t.db.selectFrom('password_resets').select('id').execute();
    const unknown = await t.request('POST', `${D}/password-reset`, { body: { email: nobody } });
    expect(unknown.status, unknown.raw).toBe(200);
    expect(unknown.body).toEqual(known.body);
    await sleep(300);
    expect(mailTo(nobody)).toEqual([]);
    expect(await t.db.selectFrom('mail_outbox').select('id').where('to_address', '=', nobody).execute()).toEqual([]);
    expect(await t.db.selectFrom('password_resets').select('id').execute()).toHaveLength(resetsBefore.length);
  });

  // The answer waits only for what an unknown address costs too, so its timing cannot tell
  // which addresses have accounts: the link is written after it. A trigger that refuses every
  // new link shows it: the answer is the unknown address's 200, and nothing is written.
  it('answers a known address without waiting for its link to be written', async () => {
    const owner = await createAccount(t);
    const email = await emailOf(t, owner.id);
    await refuseNewResetLinks(t.db, true);
    try {
      const requested = await t.request('POST', `${D}/password-reset`, { body: { email } });
      expect(requested.status, requested.raw).toBe(200);
      expect(requested.body.data[0].message).toMatch(/If an account has this e-mail address/);
      await t.app.background.drain();
      expect(await t.db.selectFrom('password_resets').select('id').where('account_id', '=', owner.id).execute()).toEqual([]);
      expect(await t.db.selectFrom('mail_outbox').select('id').where('to_address', '=', email).execute()).toEqual([]);
    } finally {
      await refuseNewResetLinks(t.db, false);
    }
    expect((await t.request('POST', `${D}/password-reset`, { body: { email } })).status).toBe(200);
    expect(linkIn((await waitForMail(email))[0]!, 'reset-password')).toHaveLength(43);
  });

  it('answers 400 naming the field for a malformed address or token', async () => {
    expectError(await t.request('POST', `${D}/password-reset`, { body: { email: 'not an address' } }), 400, /body\.email/);
    expectError(await t.request('POST', `${D}/password-reset/confirm`, { body: { token: 'short', password: NEW_PASSWORD } }), 400, /token/);
    const unknown = 'A'.repeat(43);
    expectError(await t.request('POST', `${D}/password-reset/confirm`, { body: { token: unknown, password: NEW_PASSWORD } }), 400, /body\.token/);
  });
});

describeEachEngine('dashboard password reset throttling', (engine) => {
  const t = useTestApp(engine, { smtpUrl: SMTP_URL, publicUrl: PUBLIC_URL, signInLimit: { perAccount: 2, perAddress: 1000, windowMs: 60_000 } });

  it('throttles reset requests per account', async () => {
    const owner = await createAccount(t);
    const email = await emailOf(t, owner.id);
    for (let i = 0; i < 2; i++) expect((await t.request('POST', `${D}/password-reset`, { body: { email } })).status).toBe(200);
    expectError(await t.request('POST', `${D}/password-reset`, { body: { email } }), 429, /Too many attempts/);
  });
});

describeEachEngine('dashboard invitation links', (engine) => {
  const t = useTestApp(engine, {
    smtpUrl: SMTP_URL,
    publicUrl: PUBLIC_URL,
    signInLimit: { perAccount: 1000, perAddress: 1000, windowMs: 60_000 },
  });

  async function invite(ownerToken: string, websiteId: string, email: string, role: 'viewer' | 'member') {
    const response = await t.request('POST', `${ADMIN}/websites/${websiteId}/team`, { token: ownerToken, body: { email, role } });
    expect(response.status, response.raw).toBe(200);
    return response;
  }

  it('mails a link with which a new person creates an account, is signed in, and has the invited role', async () => {
    const owner = await createAccount(t, 'Grace Hopper');
    const website = await createWebsite(t, owner.token);
    const address = newAddress();
    const invited = await invite(owner.token, website.id, address, 'viewer');
    // The answer keeps its shape and never holds the link.
    expect(Object.keys(invited.body.data[0]).sort()).toEqual(['email', 'invitationId', 'message', 'role']);
    expect(invited.body.data[0].message).toMatch(/e-mailed/);

    const [mail] = await waitForMail(address);
    expect(mail!.subject).toBe(`[Sightline] Grace Hopper invited you to ${website.domain}`);
    expect(mail!.text).toContain(`Grace Hopper (${owner.email}) invited you to the website ${website.domain}`);
    expect(mail!.text).toContain('as a viewer');
    const token = linkIn(mail!, 'invite');
    expect(invited.raw).not.toContain(token);
    const row = await t.db.selectFrom('invitations').selectAll().where('id', '=', invited.body.data[0].invitationId).executeTakeFirstOrThrow();
    expect(row.link_digest).toBe(digestSecret(token));
    expect(Date.parse(row.link_expires_at!) - Date.parse(row.created_at)).toBe(14 * 24 * 3600_000);
    const [outbox] = await t.db.selectFrom('mail_outbox').selectAll().where('to_address', '=', address).execute();
    expect(outbox).toMatchObject({ website_id: website.id, account_id: null });

    const shown = await t.request('GET', `${D}/invitations/${token}`);
    expect(shown.status, shown.raw).toBe(200);
    expect(shown.body.data).toEqual([{ email: address, websiteDomain: website.domain, role: 'viewer', accountExists: false }]);

    expectError(await t.request('POST', `${D}/invitations/accept`, { body: { token, password: NEW_PASSWORD } }), 400, /body\.name/);
    expectError(await t.request('POST', `${D}/invitations/accept`, { body: { token, name: 'New Person', password: 'short' } }), 400, /body\.password/);
    const accepted = await t.request('POST', `${D}/invitations/accept`, { body: { token, name: 'New Person', password: NEW_PASSWORD } });
    expect(accepted.status, accepted.raw).toBe(200);
    expect(accepted.body.data[0]).toMatchObject({ account: { email: address, name: 'New Person' }, csrfToken: expect.any(String) });
    const cookie = sessionCookieOf(accepted.headers['set-cookie']);
    const headers = { cookie, 'x-csrf-token': accepted.body.data[0].csrfToken };

    // Signed in, as a viewer: reads the website, cannot change it.
    expect((await t.request('GET', `${ADMIN}/websites/${website.id}`, { headers: { cookie } })).status).toBe(200);
    expectError(await t.request('PUT', `${ADMIN}/websites/${website.id}`, { headers, body: { name: 'renamed' } }), 403, /viewer/);
    const team = await t.request('GET', `${ADMIN}/websites/${website.id}/team`, { token: owner.token });
    expect(team.body.data.find((m: any) => m.email === address)).toMatchObject({ role: 'viewer', name: 'New Person' });
    expect(team.body.invitations).toEqual([]);
    expect((await signIn(t, address, NEW_PASSWORD)).status).toBe(200);

    // The invitation is gone, and its link with it.
    expectError(await t.request('GET', `${D}/invitations/${token}`), 404);
    expectError(await t.request('POST', `${D}/invitations/accept`, { body: { token, name: 'Again', password: NEW_PASSWORD } }), 400, /body\.token/);

    await waitForSent(t, address);
    await expectNowhere(t, token);
  });

  it('lets an existing account accept with its password, and answers 401 for a wrong one', async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const invitee = await createAccount(t, 'Existing Person');
    await signInAs(t, invitee.id); // gives it the password TEST_PASSWORD
    await invite(owner.token, website.id, invitee.email, 'member');
    const token = linkIn((await waitForMail(invitee.email))[0]!, 'invite');
    expect((await t.request('GET', `${D}/invitations/${token}`)).body.data[0]).toMatchObject({ accountExists: true, role: 'member' });

    expectError(await t.request('POST', `${D}/invitations/accept`, { body: { token, password: 'not the password' } }), 401, /Wrong password/);
    expect(await t.db.selectFrom('invitations').select('id').where('email', '=', invitee.email).execute()).toHaveLength(1);

    const accepted = await t.request('POST', `${D}/invitations/accept`, { body: { token, name: 'Ignored', password: TEST_PASSWORD } });
    expect(accepted.status, accepted.raw).toBe(200);
    expect(accepted.body.data[0].account).toEqual({ id: invitee.id, email: invitee.email, name: 'Existing Person' });
    const headers = { cookie: sessionCookieOf(accepted.headers['set-cookie']), 'x-csrf-token': accepted.body.data[0].csrfToken };
    // A member changes the website.
    const renamed = await t.request('PUT', `${ADMIN}/websites/${website.id}`, { headers, body: { name: 'renamed by the member' } });
    expect(renamed.status, renamed.raw).toBe(200);
    expect(await t.db.selectFrom('accounts').select('id').where('email', '=', invitee.email).execute()).toHaveLength(1);
  });

  it('refuses an expired link, a malformed token (400 naming it) and an unknown one (404)', async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const address = newAddress();
    const invited = await invite(owner.token, website.id, address, 'viewer');
    const token = linkIn((await waitForMail(address))[0]!, 'invite');
    await t.db
      .updateTable('invitations')
      .set({ link_expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', invited.body.data[0].invitationId)
      .execute();
    expectError(await t.request('GET', `${D}/invitations/${token}`), 404, /expired/);
    expectError(await t.request('POST', `${D}/invitations/accept`, { body: { token, name: 'Late', password: NEW_PASSWORD } }), 400, /body\.token/);
    expect(await t.db.selectFrom('accounts').select('id').where('email', '=', address).execute()).toEqual([]);

    expectError(await t.request('GET', `${D}/invitations/not-a-token`), 400, /path\.token/);
    expectError(await t.request('GET', `${D}/invitations/${'B'.repeat(43)}`), 404);
  });
});

describeEachEngine('dashboard mail without SMTP', (engine) => {
  const t = useTestApp(engine);

  it('refuses a password reset saying mail is not configured, and creates an invitation without mail', async () => {
    const owner = await createAccount(t);
    expectError(await t.request('POST', `${D}/password-reset`, { body: { email: owner.email } }), 403, /SMTP_URL/);
    const website = await createWebsite(t, owner.token);
    const address = newAddress();
    const invited = await t.request('POST', `${ADMIN}/websites/${website.id}/team`, { token: owner.token, body: { email: address } });
    expect(invited.status, invited.raw).toBe(200);
    expect(invited.body.data[0].message).toMatch(/no e-mail is sent/);
    expect(await t.db.selectFrom('mail_outbox').select('id').where('to_address', '=', address).execute()).toEqual([]);
  });
});

describeEachEngine('dashboard mail waiting in the outbox', (engine) => {
  // Nothing listens on port 9: the mail stays pending, as it does while SMTP is down.
  const t = useTestApp(engine, { smtpUrl: 'smtp://127.0.0.1:9', publicUrl: PUBLIC_URL });

  it('stores a waiting link mail sealed with the credential keys: the token is nowhere in the clear, and it opens to the link', async () => {
    const account = await createAccount(t);
    const email = await emailOf(t, account.id);
    const requested = await t.request('POST', `${D}/password-reset`, { body: { email } });
    expect(requested.status, requested.raw).toBe(200);
    await t.app.background.drain(); // the link is written after the answer
    const [row] = await t.db.selectFrom('mail_outbox').select(['id', 'text', 'status']).where('to_address', '=', email).execute();
    expect(row!.text).toMatch(/^sealed:v1:/);
    expect(row!.text).not.toContain('reset-password');
    const opened = mailTextToSend(t.app.keyring, row!);
    const token = linkIn({ text: opened }, 'reset-password');
    const stored = await wholeDatabase(t.db);
    expect(stored).not.toContain(token);
    expect(stored).toContain(digestSecret(token));
    // Bound to its row: the same ciphertext under another id does not open.
    expect(() => mailTextToSend(t.app.keyring, { id: 'ffffffffffffffffffffffff', text: row!.text })).toThrow(/authenticate/);
  });
});
