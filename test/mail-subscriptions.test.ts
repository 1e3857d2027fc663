import { expect, it } from 'vitest';
import { type TestApp, useTestApp } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { UNKNOWN_ID, addMember, createAccount, createApiKey, createToken, createWebsite, expectError } from './helpers/factories.ts';

// Issue 37 item 4: the website's switches (sendWeeklyReports, sendViralTrafficAlerts on the
// website's settings) and each member's own subscription (GET/PUT /websites/{id}/mail-reports).

const ADMIN = '/api/v1/admin';
const mine = (websiteId: string) => `${ADMIN}/websites/${websiteId}/mail-reports`;

async function setUp(t: TestApp) {
  const owner = await createAccount(t);
  const website = await createWebsite(t, owner.token);
  return { owner, website };
}

const subscriptionRows = (t: TestApp, websiteId: string) => t.db.selectFrom('mail_report_subscriptions').selectAll().where('website_id', '=', websiteId).execute();

describeEachEngine('reports by mail: settings and subscriptions', (engine) => {
  const t = useTestApp(engine);

  it("shows the website's switches, off for a new website, and changes them with PUT", async () => {
    const { owner, website } = await setUp(t);
    const read = await t.request('GET', `${ADMIN}/websites/${website.id}`, { token: owner.token });
    expect(read.body.data[0]).toMatchObject({ sendWeeklyReports: false, sendViralTrafficAlerts: false });
    const put = await t.request('PUT', `${ADMIN}/websites/${website.id}`, { token: owner.token, body: { sendWeeklyReports: true } });
    expect(put.status, put.raw).toBe(200);
    expect(put.body.data[0]).toMatchObject({ sendWeeklyReports: true, sendViralTrafficAlerts: false });
    await t.request('PUT', `${ADMIN}/websites/${website.id}`, { token: owner.token, body: { sendViralTrafficAlerts: true, sendWeeklyReports: false } });
    const again = await t.request('GET', `${ADMIN}/websites/${website.id}`, { token: owner.token });
    expect(again.body.data[0]).toMatchObject({ sendWeeklyReports: false, sendViralTrafficAlerts: true });
  });

  it('refuses a switch that is not a boolean with a 400 naming the field, and changes nothing', async () => {
    const { owner, website } = await setUp(t);
    for (const [field, value] of [['sendWeeklyReports', 'yes'], ['sendWeeklyReports', 1], ['sendViralTrafficAlerts', null], ['sendViralTrafficAlerts', 'true']] as const) {
      expectError(await t.request('PUT', `${ADMIN}/websites/${website.id}`, { token: owner.token, body: { name: 'Changed', [field]: value } }), 400, new RegExp(`body\\.${field}`));
    }
    const read = await t.request('GET', `${ADMIN}/websites/${website.id}`, { token: owner.token });
    expect(read.body.data[0]).toMatchObject({ name: 'Test site', sendWeeklyReports: false, sendViralTrafficAlerts: false });
  });

  it("shows each member's own subscription with the defaults, and changes only the caller's", async () => {
    const { owner, website } = await setUp(t);
    const viewer = await createAccount(t);
    await addMember(t, website.id, viewer.id, 'viewer');
    const initial = await t.request('GET', mine(website.id), { token: viewer.token });
    expect(initial.status, initial.raw).toBe(200);
    expect(initial.body.data).toEqual([{ weekly: true, monthly: false, spike: true, sendWeeklyReports: false, sendViralTrafficAlerts: false }]);

    // A viewer manages their own mail: it is their mailbox, not the website's settings.
    const changed = await t.request('PUT', mine(website.id), { token: viewer.token, body: { monthly: true, spike: false } });
    expect(changed.status, changed.raw).toBe(200);
    expect(changed.body.data[0]).toMatchObject({ weekly: true, monthly: true, spike: false });
    const ownerView = await t.request('GET', mine(website.id), { token: owner.token });
    expect(ownerView.body.data[0]).toMatchObject({ weekly: true, monthly: false, spike: true });
    const rows = await subscriptionRows(t, website.id);
    expect(rows.map((row) => [row.account_id, row.kind, Boolean(row.enabled)]).sort()).toEqual([
      [viewer.id, 'monthly', true],
      [viewer.id, 'spike', false],
    ]);
  });

  it('refuses bad input with a 400 naming the field, and changes nothing', async () => {
    const { owner, website } = await setUp(t);
    const cases: Array<[unknown, RegExp]> = [
      [{ weekly: 'yes' }, /body\.weekly/],
      [{ monthly: 1 }, /body\.monthly/],
      [{ spike: null }, /body\.spike/],
      [{}, /body/],
      [{ weekly: true, daily: true }, /daily/],
    ];
    for (const [body, message] of cases) expectError(await t.request('PUT', mine(website.id), { token: owner.token, body }), 400, message);
    expect(await subscriptionRows(t, website.id)).toEqual([]);
  });

  it('answers 401 without a credential, 403 without the permission, for an API key or out of scope, 404 for another account', async () => {
    const { owner, website } = await setUp(t);
    const other = await setUp(t);
    const noAnalytics = await createToken(t, owner, ['settings:read', 'settings:write']);
    const elsewhere = await createToken(t, owner, ['analytics:read'], [other.website.id]);
    const narrow = await createToken(t, owner, ['analytics:read'], [website.id]);
    const key = await createApiKey(t, owner.token, website.id);
    for (const [method, body] of [['GET', undefined], ['PUT', { weekly: false }]] as const) {
      expectError(await t.request(method, mine(website.id), { body }), 401);
      expectError(await t.request(method, mine(website.id), { token: noAnalytics, body }), 403);
      expectError(await t.request(method, mine(website.id), { token: elsewhere, body }), 403);
      expectError(await t.request(method, mine(website.id), { token: key.key, body }), 403);
      expectError(await t.request(method, mine(website.id), { token: other.owner.token, body }), 404);
      expectError(await t.request(method, mine(UNKNOWN_ID), { token: owner.token, body }), 404);
    }
    expect(await subscriptionRows(t, website.id)).toEqual([]);
    expect((await t.request('PUT', mine(website.id), { token: narrow, body: { weekly: false } })).status).toBe(200);
    expect((await subscriptionRows(t, website.id)).map((row) => row.kind)).toEqual(['weekly']);
  });
});
