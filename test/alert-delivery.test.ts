import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { DEFAULT_OUTBOX_OPTIONS, retryDelay } from '../src/mail/outbox-worker.ts';
import type { NewEvent } from '../src/modules/events/event.types.ts';
import { recordEvents } from '../src/modules/events/record-events.ts';
import { TEST_CONFIG_OVERRIDES, type TestApp, useTestApp } from './helpers/app.ts';
import { describeEachEngine, openTestDatabase } from './helpers/engines.ts';
import { addMember, createAccount, createWebsite, newEvent, type TestAccount } from './helpers/factories.ts';
import { type SmtpInbox, startSmtpInbox } from './helpers/smtp-inbox.ts';

// Alert e-mail goes through a real SMTP server (smtp-server on 127.0.0.1) and the real nodemailer
// transport; messages are told apart by recipient, as every test has its own owner account.

const ADMIN = '/api/v1/admin';
const SMTP_USER = 'sightline-mailer';
const SMTP_PASS = 'pw-Q8x!secret/42';

const inbox = await startSmtpInbox({ auth: { user: SMTP_USER, pass: SMTP_PASS } });
const rejecting = await startSmtpInbox({ rejectWith: '5.7.1 Rejected for the test' });
afterAll(async () => {
  await inbox.close();
  await rejecting.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor<T>(probe: () => T | undefined | Promise<T | undefined>, what: string, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

function goalEvent(websiteId: string, name: string, visitorId = 'visitor-1'): NewEvent {
  return newEvent(websiteId, visitorId, { type: 'custom', name, sessionId: 'session-1', hostname: null, path: '/pricing', source: 'api' });
}

const SIGNUP_ALERT = {
  name: 'Signups',
  trigger: { goalName: 'signup' },
  template: { subject: 'New {{goal}} on {{website}}', message: 'Visitor {{visitor}} completed {{ goal }} at {{time}}; {{unknown}} stays.' },
};

async function createAlert(t: TestApp, token: string, websiteId: string, body: object = SIGNUP_ALERT) {
  const response = await t.request('POST', `${ADMIN}/websites/${websiteId}/alerts`, { token, body });
  expect(response.status, response.raw).toBe(200);
  return response.body.data[0] as { id: string; lastTriggeredAt: string | null };
}

async function setUp(t: TestApp, alert: object = SIGNUP_ALERT) {
  const owner = await createAccount(t);
  const website = await createWebsite(t, owner.token);
  const created = await createAlert(t, owner.token, website.id, alert);
  return { owner, website, alert: created };
}

async function history(t: TestApp, owner: TestAccount, websiteId: string) {
  const response = await t.request('GET', `${ADMIN}/websites/${websiteId}/alerts/history`, { token: owner.token });
  expect(response.status, response.raw).toBe(200);
  return response.body as { data: { status: string; error: string | null; visitorId: string; alertName: string; goalName: string; triggeredAt: string }[]; counts: object };
}

const outboxOf = (t: TestApp, websiteId: string) => t.db.selectFrom('mail_outbox').selectAll().where('website_id', '=', websiteId).execute();
const mailTo = (server: SmtpInbox, email: string) => server.mailsTo(email);
const waitForMail = (server: SmtpInbox, email: string, count = 1) =>
  waitFor(() => (mailTo(server, email).length >= count ? mailTo(server, email) : undefined), `${count} e-mail(s) to ${email}`);
const waitForStatus = (t: TestApp, owner: TestAccount, websiteId: string, status: string) =>
  waitFor(async () => ((await history(t, owner, websiteId)).data.some((e) => e.status === status) ? true : undefined), `a ${status} history row`);

describeEachEngine('alert delivery', (engine) => {
  const t = useTestApp(engine, { smtpUrl: inbox.url, mailFrom: 'Sightline Alerts <alerts@sightline.test>' });

  it('emails the website owner the rendered template once the goal event is committed', async () => {
    const { owner, website } = await setUp(t);
    const member = await createAccount(t);
    await addMember(t, website.id, member.id, 'member');
    const [event] = await t.app.events.write([goalEvent(website.id, 'signup', 'visitor-42')]);

    const [mail] = await waitForMail(inbox, owner.email);
    expect(mail!.rcptTo).toEqual([owner.email]);
    expect(mail!.mailFrom).toBe('alerts@sightline.test');
    expect(mail!.user).toBe(SMTP_USER);
    expect(mail!.headers.to).toBe(owner.email);
    expect(mail!.headers.subject).toBe(`New signup on ${website.domain}`);
    expect(mail!.text).toBe(
      `Visitor visitor-42 completed signup at ${event!.occurredAt}; {{unknown}} stays.\n\n-- \n` +
        `Sent by Sightline for the alert "Signups" on ${website.domain}.\n`,
    );
    expect(mailTo(inbox, member.email)).toEqual([]);

    await waitForStatus(t, owner, website.id, 'sent');
    const body = await history(t, owner, website.id);
    expect(body.data).toEqual([expect.objectContaining({ status: 'sent', error: null, visitorId: 'visitor-42', alertName: 'Signups', goalName: 'signup' })]);
    expect(body.counts).toEqual({ queued: 0, sent: 1, failed: 0, skipped: 0, throttled: 0, total: 1 });
    const [row] = await outboxOf(t, website.id);
    expect(row).toMatchObject({ status: 'sent', attempts: 1, last_error: null, to_address: owner.email });
    expect(row!.sent_at).not.toBeNull();
  });

  it('writes the history row in the transaction of the goal event, before the e-mail goes out', async () => {
    const { owner, website } = await setUp(t);
    await t.db.transaction().execute(async (trx) => {
      await recordEvents(trx, [goalEvent(website.id, 'signup')], { alertCooldownSeconds: 60, mailEnabled: true });
      const rows = await trx.selectFrom('alert_history').select('status').where('website_id', '=', website.id).execute();
      expect(rows).toEqual([{ status: 'queued' }]);
      expect(await trx.selectFrom('mail_outbox').select(['status', 'to_address']).where('website_id', '=', website.id).execute()).toEqual([
        { status: 'pending', to_address: owner.email },
      ]);
    });
    // Committed without the writer's poke: the worker's poll finds it.
    await waitForMail(inbox, owner.email);
    await waitForStatus(t, owner, website.id, 'sent');
  });

  it('uses a default subject naming the alert, the goal and the website when the template has none', async () => {
    const { owner, website } = await setUp(t, { ...SIGNUP_ALERT, name: 'Big fish', template: { message: 'Someone signed up.' } });
    await t.app.events.write([goalEvent(website.id, 'signup')]);
    const [mail] = await waitForMail(inbox, owner.email);
    expect(mail!.headers.subject).toBe(`[Sightline] Big fish: signup on ${website.domain}`);
    expect(mail!.text).toBe(`Someone signed up.\n\n-- \nSent by Sightline for the alert "Big fish" on ${website.domain}.\n`);
  });

  it('records a second firing within the cooldown as throttled and sends no second e-mail', async () => {
    const { owner, website, alert } = await setUp(t);
    await t.app.events.write([goalEvent(website.id, 'signup', 'first')]);
    await waitForStatus(t, owner, website.id, 'sent');
    await t.app.events.write([goalEvent(website.id, 'signup', 'second')]);

    await sleep(300);
    expect(mailTo(inbox, owner.email)).toHaveLength(1);
    expect(await outboxOf(t, website.id)).toHaveLength(1);
    const body = await history(t, owner, website.id);
    expect(body.data.map((e) => [e.visitorId, e.status])).toEqual([
      ['second', 'throttled'],
      ['first', 'sent'],
    ]);
    expect(body.counts).toEqual({ queued: 0, sent: 1, failed: 0, skipped: 0, throttled: 1, total: 2 });
    // lastTriggeredAt is the latest firing, the throttled one included.
    const listed = await t.request('GET', `${ADMIN}/websites/${website.id}/alerts`, { token: owner.token });
    expect(listed.body.data[0].id).toBe(alert.id);
    expect(listed.body.data[0].lastTriggeredAt).toBe(body.data[0]!.triggeredAt);
    expect(body.data[0]!.triggeredAt > body.data[1]!.triggeredAt).toBe(true);
  });

  it('throttles the later goal events of one batch', async () => {
    const { owner, website } = await setUp(t);
    await t.app.events.write([goalEvent(website.id, 'signup', 'a'), goalEvent(website.id, 'signup', 'b'), goalEvent(website.id, 'signup', 'c')]);
    await waitForStatus(t, owner, website.id, 'sent');
    await sleep(200);
    expect(mailTo(inbox, owner.email)).toHaveLength(1);
    expect((await history(t, owner, website.id)).counts).toEqual({ queued: 0, sent: 1, failed: 0, skipped: 0, throttled: 2, total: 3 });
  });

  it('sends again once the cooldown has passed', async () => {
    const { owner, website, alert } = await setUp(t);
    await t.app.events.write([goalEvent(website.id, 'signup', 'first')]);
    await waitForMail(inbox, owner.email);
    await t.db
      .updateTable('alerts')
      .set({ last_mailed_at: new Date(Date.now() - 61_000).toISOString() })
      .where('id', '=', alert.id)
      .execute();
    await t.app.events.write([goalEvent(website.id, 'signup', 'second')]);
    const mails = await waitForMail(inbox, owner.email, 2);
    expect(mails[1]!.text).toMatch(/^Visitor second completed signup/);
    await waitFor(async () => ((await history(t, owner, website.id)).counts as any).sent === 2 || undefined, 'two sent rows');
  });

  it('records nothing for a disabled alert, and fires it again once enabled', async () => {
    const { owner, website, alert } = await setUp(t, { ...SIGNUP_ALERT, isEnabled: false });
    await t.app.events.write([goalEvent(website.id, 'signup')]);
    await sleep(300);
    expect((await history(t, owner, website.id)).data).toEqual([]);
    expect(await outboxOf(t, website.id)).toEqual([]);
    expect(mailTo(inbox, owner.email)).toEqual([]);

    const enabled = await t.request('PUT', `${ADMIN}/websites/${website.id}/alerts/${alert.id}`, { token: owner.token, body: { isEnabled: true } });
    expect(enabled.status, enabled.raw).toBe(200);
    await t.app.events.write([goalEvent(website.id, 'signup')]);
    await waitForMail(inbox, owner.email);
  });

  it('fires nothing for another goal, a pageview, or the same goal on another website', async () => {
    const { owner, website } = await setUp(t);
    const other = await createWebsite(t, owner.token);
    await t.app.events.write([
      goalEvent(website.id, 'purchase'),
      { ...goalEvent(website.id, 'signup'), type: 'pageview', name: null },
      goalEvent(other.id, 'signup'),
    ]);
    await sleep(300);
    expect((await history(t, owner, website.id)).data).toEqual([]);
    expect((await history(t, owner, other.id)).data).toEqual([]);
    expect(await t.db.selectFrom('mail_outbox').select('id').where('website_id', 'in', [website.id, other.id]).execute()).toEqual([]);
    expect(mailTo(inbox, owner.email)).toEqual([]);
  });

  it('sends one e-mail per matching alert', async () => {
    const { owner, website } = await setUp(t);
    await createAlert(t, owner.token, website.id, { ...SIGNUP_ALERT, name: 'Second alert', template: { subject: 'Second', message: 'The second alert.' } });
    await t.app.events.write([goalEvent(website.id, 'signup')]);
    const mails = await waitForMail(inbox, owner.email, 2);
    expect(mails.map((m) => m.headers.subject).sort()).toEqual(['New signup on ' + website.domain, 'Second']);
    await waitFor(async () => ((await history(t, owner, website.id)).counts as any).sent === 2 || undefined, 'two sent rows');
  });

  it('never writes the SMTP credentials to the log', async () => {
    const { owner, website } = await setUp(t);
    await t.app.events.write([goalEvent(website.id, 'signup')]);
    await waitForStatus(t, owner, website.id, 'sent');
    const log = t.logLines.join('\n');
    expect(log).toContain('e-mail delivery enabled');
    expect(log).not.toContain(SMTP_PASS);
    expect(log).not.toContain(encodeURIComponent(SMTP_PASS));
  });
});

describeEachEngine('alert delivery without SMTP', (engine) => {
  const t = useTestApp(engine);

  it('records every firing as skipped saying why, queues no mail and starts no cooldown', async () => {
    const { owner, website, alert } = await setUp(t);
    expect(t.app.mailOutbox).toBeNull();
    const lastTriggeredAt = async () =>
      (await t.request('GET', `${ADMIN}/websites/${website.id}/alerts`, { token: owner.token })).body.data.find((a: { id: string }) => a.id === alert.id)
        .lastTriggeredAt;
    await t.app.events.write([goalEvent(website.id, 'signup', 'one')]);
    const first = await history(t, owner, website.id);
    expect(await lastTriggeredAt()).toBe(first.data[0]!.triggeredAt);
    await sleep(5);
    await t.app.events.write([goalEvent(website.id, 'signup', 'two')]);

    const body = await history(t, owner, website.id);
    const why = 'E-mail is not configured on this server (SMTP_URL is unset)';
    expect(body.data.map((e) => [e.visitorId, e.status, e.error])).toEqual([
      ['two', 'skipped', why],
      ['one', 'skipped', why],
    ]);
    expect(body.counts).toEqual({ queued: 0, sent: 0, failed: 0, skipped: 2, throttled: 0, total: 2 });
    expect(await outboxOf(t, website.id)).toEqual([]);
    // Every firing moves lastTriggeredAt; the e-mail cooldown never started.
    expect(await lastTriggeredAt()).toBe(body.data[0]!.triggeredAt);
    expect(body.data[0]!.triggeredAt > body.data[1]!.triggeredAt).toBe(true);
    const row = await t.db.selectFrom('alerts').select('last_mailed_at').where('id', '=', alert.id).executeTakeFirstOrThrow();
    expect(row.last_mailed_at).toBeNull();
  });
});

describeEachEngine('alert delivery to a server that refuses the message', (engine) => {
  const t = useTestApp(engine, { smtpUrl: rejecting.url });

  it('retries with exponential backoff, then records failed with the error on the history and outbox rows', async () => {
    const { owner, website } = await setUp(t);
    await t.app.events.write([goalEvent(website.id, 'signup')]);
    const { maxAttempts, leaseMs } = DEFAULT_OUTBOX_OPTIONS;

    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      if (attempt > 1) {
        // Time travel: make the scheduled retry due now instead of waiting for it.
        await t.db.updateTable('mail_outbox').set({ next_attempt_at: new Date(Date.now() - 1000).toISOString() }).where('website_id', '=', website.id).execute();
        t.app.mailOutbox!.poke();
      }
      const row = await waitFor(async () => {
        const [r] = await outboxOf(t, website.id);
        // A claimed row carries a lease far in the future until its failure is recorded.
        const recorded = r && r.attempts === attempt && (r.status === 'failed' || Date.parse(r.next_attempt_at) < Date.now() + leaseMs - 10_000);
        return recorded ? r : undefined;
      }, `attempt ${attempt}`);
      expect(row.last_error).toMatch(/554.*Rejected for the test/);
      if (attempt < maxAttempts) {
        expect(row.status).toBe('pending');
        const delay = Date.parse(row.next_attempt_at) - Date.now();
        const expected = retryDelay(attempt, DEFAULT_OUTBOX_OPTIONS);
        expect(delay).toBeGreaterThan(expected - 5000);
        expect(delay).toBeLessThanOrEqual(expected);
        const body = await history(t, owner, website.id);
        expect(body.data.map((e) => [e.status, e.error])).toEqual([['queued', null]]);
        expect(body.counts).toEqual({ queued: 1, sent: 0, failed: 0, skipped: 0, throttled: 0, total: 1 });
      } else {
        expect(row.status).toBe('failed');
      }
    }
    expect(rejecting.refused.filter((to) => to.includes(owner.email))).toHaveLength(maxAttempts);

    const body = await history(t, owner, website.id);
    expect(body.data).toHaveLength(1);
    expect(body.data[0]!.status).toBe('failed');
    expect(body.data[0]!.error).toMatch(/554.*Rejected for the test/);
    expect(body.counts).toEqual({ queued: 0, sent: 0, failed: 1, skipped: 0, throttled: 0, total: 1 });

    // The credentials of SMTP_URL reach neither the database nor the log.
    const stored = JSON.stringify([await outboxOf(t, website.id), body]);
    const log = t.logLines.join('\n');
    expect(log).toContain('giving up');
    for (const secret of [SMTP_PASS, encodeURIComponent(SMTP_PASS)]) {
      expect(stored).not.toContain(secret);
      expect(log).not.toContain(secret);
    }
  });
});

describeEachEngine('alert delivery after a restart', (engine) => {
  it('sends the mail a stopped app left queued when the next app starts on the same database', async () => {
    const database = await openTestDatabase(engine);
    const config = loadConfig({}, { ...TEST_CONFIG_OVERRIDES, smtpUrl: inbox.url, databaseUrl: 'test' });
    const first = await buildApp({ config, db: database.db, logger: false });
    let second: Awaited<ReturnType<typeof buildApp>> | undefined;
    try {
      // Enough of a TestApp for the factories, on the first app.
      const t = {
        db: database.db.kysely,
        request: async (method: string, url: string, options: { token?: string; body?: object } = {}) => {
          const response = await first.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${options.token}` }, payload: options.body });
          return { status: response.statusCode, body: response.json(), headers: response.headers, raw: response.body };
        },
      } as unknown as TestApp;
      const { owner, website } = await setUp(t);
      await first.close();
      // The commit of a goal event, after which the process stopped before its worker sent anything.
      await database.db.kysely.transaction().execute((trx) => recordEvents(trx, [goalEvent(website.id, 'signup', 'restart')], { alertCooldownSeconds: 60, mailEnabled: true }));
      await sleep(200);
      expect(mailTo(inbox, owner.email)).toEqual([]);

      second = await buildApp({ config, db: database.db, logger: false });
      await second.ready();
      const [mail] = await waitForMail(inbox, owner.email);
      expect(mail!.text).toMatch(/^Visitor restart completed signup/);
      const rows = await waitFor(async () => {
        const found = await database.db.kysely.selectFrom('alert_history').select('status').where('website_id', '=', website.id).execute();
        return found[0]?.status === 'sent' ? found : undefined;
      }, 'the history row to turn sent');
      expect(rows).toEqual([{ status: 'sent' }]);
    } finally {
      await first.close();
      await second?.close();
      await database.db.close();
      await database.drop();
    }
  });
});

describe('alert e-mail retry schedule', () => {
  it('doubles from 30 seconds and is capped at 30 minutes', () => {
    expect([1, 2, 3, 4, 5, 10].map((n) => retryDelay(n, DEFAULT_OUTBOX_OPTIONS))).toEqual([30_000, 60_000, 120_000, 240_000, 480_000, 1_800_000]);
  });
});
