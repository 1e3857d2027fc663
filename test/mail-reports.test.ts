import { afterAll, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { runMailReports } from '../src/modules/reports/report-scheduler.ts';
import { type TestApp, useTestApp, writeAndDerive } from './helpers/app.ts';
import { describeEachEventEngine } from './helpers/clickhouse.ts';
import { addMember, createAccount, createApiKey, newEvent, type TestAccount } from './helpers/factories.ts';
import { type ReceivedMail, alternativeParts, startSmtpInbox } from './helpers/smtp-inbox.ts';

// Reports by mail end to end: the scheduling pass (given its `now`, never a wait), the outbox
// worker, the real SMTP server; the numbers are checked against the website API's own answers.
// The server's own pass is off (MAIL_REPORTS off), so only the passes the tests run queue mail.

const ADMIN = '/api/v1/admin';
const inbox = await startSmtpInbox();
afterAll(() => inbox.close());

const MAIL_REPORTS = { enabled: false, spikeMinVisitors: 20, spikeFactor: 3, spikeCooldownHours: 6 };

async function websiteOf(t: TestApp, owner: TestAccount, settings: object) {
  const created = await t.request('POST', `${ADMIN}/websites`, { token: owner.token, body: { domain: `r-${owner.id.slice(-6)}.example.com`, timezone: 'Europe/Paris' } });
  expect(created.status, created.raw).toBe(200);
  const id = created.body.data[0].id as string;
  const updated = await t.request('PUT', `${ADMIN}/websites/${id}`, { token: owner.token, body: settings });
  expect(updated.status, updated.raw).toBe(200);
  return { id, domain: created.body.data[0].domain as string };
}

const pageview = (websiteId: string, visitor: string, at: string, path: string, source: string | null = null) =>
  newEvent(websiteId, visitor, {
    occurredAt: at,
    path,
    referrer: source ? 'https://www.google.com/' : null,
    sessionId: `s-${visitor}-${at.slice(0, 10)}`,
    ...(source ? { details: { referrerHost: 'www.google.com', referrerSource: source } } : {}),
  });

/** The report mails queued for the website (other tests' websites share the database). */
const deliveries = async (t: TestApp, websiteId: string) =>
  t.db.selectFrom('mail_report_deliveries').select(['account_id', 'kind', 'period_start']).where('website_id', '=', websiteId).orderBy('kind').orderBy('account_id').execute();

const outboxCount = async (t: TestApp, websiteId: string) =>
  Number((await t.db.selectFrom('mail_outbox').select((eb) => eb.fn.countAll().as('n')).where('website_id', '=', websiteId).executeTakeFirstOrThrow()).n);

function unsubscribePath(mail: ReceivedMail): string {
  const text = alternativeParts(mail).text!;
  const url = /Unsubscribe \(no sign-in needed\): (\S+)/.exec(text)![1]!;
  return new URL(url).pathname;
}

describeEachEventEngine('reports by mail', (engine) => {
  const t = useTestApp(engine, { smtpUrl: inbox.url, mailReports: MAIL_REPORTS, publicUrl: 'https://stats.example.test' });
  // Monday 9 March 2026, 08:00 in Paris: the week of 2 March has ended.
  const AFTER_WEEK = new Date('2026-03-09T07:00:00Z');

  it('mails the weekly report with the website API\'s numbers, in HTML and text, once per period across restarts', async () => {
    const owner = await createAccount(t);
    const member = await createAccount(t);
    const site = await websiteOf(t, owner, { sendWeeklyReports: true });
    await addMember(t, site.id, member.id, 'viewer');
    await writeAndDerive(t, [
      // The week before: two visitors.
      pageview(site.id, 'p1', '2026-02-24T10:00:00Z', '/'),
      pageview(site.id, 'p2', '2026-02-25T10:00:00Z', '/'),
      // The week: three visitors, four page views, two from Google.
      pageview(site.id, 'v1', '2026-03-02T09:00:00Z', '/', 'Google'),
      pageview(site.id, 'v1', '2026-03-02T09:01:00Z', '/pricing', 'Google'),
      pageview(site.id, 'v2', '2026-03-04T12:00:00Z', '/pricing', 'Google'),
      pageview(site.id, 'v3', '2026-03-08T22:30:00Z', '/'),
      // After the week (Monday 00:30 in Paris): not counted.
      pageview(site.id, 'late', '2026-03-08T23:30:00Z', '/late'),
    ]);
    // Revenue: $20 the week before, $49.50 in the week.
    const key = await createApiKey(t, owner.token, site.id);
    for (const [visitor, amount, at] of [['p1', 20, '2026-02-24T10:05:00Z'], ['v2', 49.5, '2026-03-04T12:05:00Z']] as const) {
      const paid = await t.request('POST', '/api/v1/payments', { token: key.key, body: { amount, currency: 'USD', transaction_id: `tx-${visitor}`, datafast_visitor_id: visitor, timestamp: at } });
      expect(paid.status, paid.raw).toBe(200);
    }

    const overview = await t.request('GET', '/api/v1/analytics/overview', {
      token: owner.token,
      query: { websiteId: site.id, startAt: '2026-03-02', endAt: '2026-03-08' },
    });
    expect(overview.status, overview.raw).toBe(200);
    expect(overview.body.data[0]).toMatchObject({ visitors: 3, pageviews: 4, revenue: 49.5 });

    await runMailReports(t.app.mailReports, AFTER_WEEK);
    expect(await deliveries(t, site.id)).toHaveLength(2);
    t.app.mailOutbox!.poke();
    const mail = await inbox.nextMailTo(owner.email);
    expect(mail.subject).toBe(`[Sightline] Weekly report for ${site.domain}: week of 2 March 2026`);
    expect(mail.headers['list-unsubscribe']).toMatch(/^<https:\/\/stats\.example\.test\/mail\/unsubscribe\/[A-Za-z0-9]{43}>$/);
    expect(mail.headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');
    const { text, html } = alternativeParts(mail);
    expect(text).toMatch(/Visitors\s+3 {2}\(\+50% on the previous week: 2\)/);
    expect(text).toMatch(/Page views\s+4 {2}\(\+100% on the previous week: 2\)/);
    expect(text).toMatch(/Revenue\s+\$49\.50 {2}\(\+148% on the previous week: \$20\.00\)/);
    const sources = await t.request('GET', '/api/v1/analytics/referrers', {
      token: owner.token,
      query: { websiteId: site.id, startAt: '2026-03-02', endAt: '2026-03-08' },
    });
    expect(sources.body.data.slice(0, 2)).toMatchObject([{ referrer: 'Google', visitors: 2 }, { visitors: 1 }]);
    expect(text).toMatch(/Top sources \(visitors\)\n\s+2 {2}Google\n\s+1 {2}Direct\/None\n/);
    expect(text).toMatch(/Top pages \(visitors\)\n\s+2 {2}\/\n\s+2 {2}\/pricing\n/);
    expect(text).not.toContain('/late');
    expect(text).toContain(`Dashboard: https://stats.example.test/websites/${site.id}`);
    expect(html).toMatch(/^<!DOCTYPE html>/);
    expect(html).toContain('<td style="padding:8px 12px;border-bottom:1px solid #e5e7eb;font-size:14px;color:#111827;text-align:right;font-weight:bold;">3</td>');
    expect(html).toContain('+50%');
    expect(html).not.toMatch(/<script|<link|class=/);
    // The member got their own, with another unsubscribe link.
    const memberMail = await inbox.nextMailTo(member.email);
    expect(unsubscribePath(memberMail)).not.toBe(unsubscribePath(mail));

    // The same pass again, on this instance and on a restarted one over the same database: nothing new.
    await runMailReports(t.app.mailReports, AFTER_WEEK);
    expect(await deliveries(t, site.id)).toHaveLength(2);
    const restarted = await buildApp({ config: t.config, db: t.app.db, closeDb: false, logger: false });
    try {
      await runMailReports(restarted.mailReports, new Date(AFTER_WEEK.getTime() + 3600_000));
      expect(await deliveries(t, site.id)).toHaveLength(2);
      // Two instances at once for the next week: each member is mailed once.
      const nextWeek = new Date('2026-03-16T07:00:00Z');
      await Promise.all([runMailReports(t.app.mailReports, nextWeek), runMailReports(restarted.mailReports, nextWeek)]);
      expect(await deliveries(t, site.id)).toHaveLength(4);
    } finally {
      await restarted.close();
    }
    expect(await outboxCount(t, site.id)).toBe(4);
    // The stored mail keeps no unsubscribe token in the clear, before or after sending.
    const stored = await t.db.selectFrom('mail_outbox').select(['text', 'html', 'list_unsubscribe']).where('website_id', '=', site.id).execute();
    for (const row of stored) expect(JSON.stringify(row)).not.toContain('/mail/unsubscribe/');
  });

  it('unsubscribes without a session through the mailed link, and the next report is not sent', async () => {
    const owner = await createAccount(t);
    const member = await createAccount(t);
    const site = await websiteOf(t, owner, { sendWeeklyReports: true });
    await addMember(t, site.id, member.id, 'member');
    await runMailReports(t.app.mailReports, AFTER_WEEK);
    t.app.mailOutbox!.poke();
    const path = unsubscribePath(await inbox.nextMailTo(owner.email));
    await inbox.nextMailTo(member.email);

    const confirm = await t.request('GET', path);
    expect(confirm.status).toBe(200);
    expect(confirm.headers['content-type']).toMatch(/^text\/html/);
    expect(confirm.raw).toContain(`Stop the weekly report for ${site.domain}?`);
    expect(confirm.raw).toContain('<form method="post">');
    // Following the link changes nothing.
    expect(await t.db.selectFrom('mail_report_subscriptions').selectAll().where('website_id', '=', site.id).execute()).toEqual([]);

    // A mail client's one-click unsubscribe (RFC 8058).
    const done = await t.request('POST', path, { payload: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(done.status, done.raw).toBe(200);
    expect(done.raw).toContain('You will not receive the weekly report');

    const nextWeek = new Date('2026-03-16T07:00:00Z');
    await runMailReports(t.app.mailReports, nextWeek);
    expect((await deliveries(t, site.id)).filter((row) => row.period_start === '2026-03-08T23:00:00.000Z')).toEqual([
      { account_id: member.id, kind: 'weekly', period_start: '2026-03-08T23:00:00.000Z' },
    ]);
    t.app.mailOutbox!.poke();
    await inbox.nextMailTo(member.email);
    expect(inbox.mailsTo(owner.email)).toHaveLength(1);

    const bad = await t.request('POST', '/mail/unsubscribe/NotAToken0000000000000000000000000000000000');
    expect(bad.status).toBe(404);
    expect(bad.raw).toContain('not valid');
    // No token reaches the log.
    const token = path.split('/').pop()!;
    expect(t.logLines.join('\n')).not.toContain(token);
  });

  it('answers odd unsubscribe requests without a 5xx and changes nothing', async () => {
    const before = await t.db.selectFrom('mail_report_subscriptions').selectAll().execute();
    const token = 'Zz9'.repeat(14);
    for (const [method, url, options] of [
      ['GET', `/mail/unsubscribe/${token}`, {}],
      ['POST', `/mail/unsubscribe/${token}`, { payload: '--x\r\nbroken', headers: { 'content-type': 'multipart/form-data; boundary=x' } }],
      ['POST', `/mail/unsubscribe/${token}`, { payload: '{"a":', headers: { 'content-type': 'application/json' } }],
      ['POST', `/mail/unsubscribe/${'a'.repeat(300)}`, {}],
      ['GET', '/mail/unsubscribe/%E0%A4%A', {}],
    ] as const) {
      const response = await t.request(method, url, options);
      expect(response.status, `${method} ${url}: ${response.raw}`).toBeGreaterThanOrEqual(400);
      expect(response.status, `${method} ${url}: ${response.raw}`).toBeLessThan(500);
      expect(response.raw).not.toMatch(/at .*\.ts:\d+/);
    }
    expect(await t.db.selectFrom('mail_report_subscriptions').selectAll().execute()).toEqual(before);
  });

  it('mails the monthly report to members who opt in only', async () => {
    const owner = await createAccount(t);
    const member = await createAccount(t);
    const site = await websiteOf(t, owner, { sendWeeklyReports: true });
    await addMember(t, site.id, member.id, 'viewer');
    await t.db.insertInto('mail_report_subscriptions').values({ website_id: site.id, account_id: member.id, kind: 'monthly', enabled: true, updated_at: new Date().toISOString() }).execute();
    // 1 April 2026, 06:00 in Paris: March has ended (and no week has, within the catch-up days? the week of 23 March has).
    await runMailReports(t.app.mailReports, new Date('2026-04-01T04:00:00Z'));
    const rows = await deliveries(t, site.id);
    expect(rows.filter((row) => row.kind === 'monthly')).toEqual([{ account_id: member.id, kind: 'monthly', period_start: '2026-02-28T23:00:00.000Z' }]);
    expect(rows.filter((row) => row.kind === 'weekly')).toHaveLength(2);
    t.app.mailOutbox!.poke();
    const monthly = await waitForSubject(member.email, /Monthly report .*: March 2026$/);
    expect(alternativeParts(monthly).text).toContain('previous month');
  });

  it('mails nothing while the website\'s switch is off', async () => {
    const owner = await createAccount(t);
    const site = await websiteOf(t, owner, { sendWeeklyReports: false, sendViralTrafficAlerts: false });
    await runMailReports(t.app.mailReports, AFTER_WEEK);
    expect(await outboxCount(t, site.id)).toBe(0);
  });
});

async function waitForSubject(address: string, subject: RegExp): Promise<ReceivedMail> {
  for (;;) {
    const mail = await inbox.nextMailTo(address);
    if (subject.test(mail.subject)) return mail;
  }
}
