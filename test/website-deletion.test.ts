import { claimNextJob } from '../src/modules/integrations/job-queue.ts';
import { runImportJob } from '../src/modules/imports/import-job.ts';
import { IMPORT_JOB } from '../src/modules/imports/imports.repository.ts';
import { createImport } from '../src/modules/imports/imports.service.ts';
import { sealUmamiSource } from '../src/modules/imports/umami-connection.ts';
import { plausibleExport, zipOf } from './helpers/plausible-export.ts';
import { createHmac } from 'node:crypto';
import { expect, it } from 'vitest';
import { runMailReports } from '../src/modules/reports/report-scheduler.ts';
import { DateTime } from 'luxon';
import { deleteWebsite } from '../src/modules/websites/website-deletion.ts';
import { type TestApp, settleRollups, useTestApp } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { rowsReferencing, tablesWithWebsiteId } from './helpers/website-rows.ts';
import { type TestAccount, addMember, createAccount, createApiKey, createToken, createWebsite, newEvent } from './helpers/factories.ts';

// Deleting a website removes every row that belongs to it, in every table the database holds
// (read from the database's own catalog, so a table added later cannot be forgotten), and
// nothing of the account's other websites.

const ADMIN = '/api/v1/admin';


/** Gives the website a row in every table that can hold one, through the API where there is a route. */
async function populate(t: TestApp, owner: TestAccount, websiteId: string, member: TestAccount) {
  const ok = async (method: string, url: string, options: Parameters<TestApp['request']>[2]) => {
    const response = await t.request(method, url, options);
    expect(response.status, `${method} ${url}: ${response.raw}`).toBe(200);
    return response;
  };
  const site = `${ADMIN}/websites/${websiteId}`;
  const key = await createApiKey(t, owner.token, websiteId);
  await addMember(t, websiteId, member.id, 'viewer');
  await ok('POST', `${site}/team`, { token: owner.token, body: { email: `invited-${websiteId}@example.com`, role: 'member' } });
  await ok('POST', `${site}/alerts`, {
    token: owner.token,
    body: { name: 'Signups', trigger: { goalName: 'signup' }, template: { message: 'Someone signed up.' } },
  });
  await ok('POST', `${site}/funnels`, { token: owner.token, body: { name: 'Signup', steps: [{ type: 'pageview', url: '/' }, { type: 'goal', goalName: 'signup' }] } });
  await ok('PATCH', `${site}/goals/customizations`, { token: owner.token, body: { goalName: 'signup', displayName: 'Sign-up' } });
  await ok('POST', `${site}/integrations/provider-four`, { token: owner.token, body: { providerFourApiKey: 'sk_live_deletion_test' } });
  await ok('PATCH', `${site}/integrations/provider-four`, { token: owner.token });
  // Shopify connected by its webhook, and one verified delivery remembered.
  await ok('PUT', `${site}/integrations/provider-five/webhook`, { token: owner.token, body: { signingSecret: 'shpss_deletion_test' } });
  const order = JSON.stringify({ id: 99, financial_status: 'paid', total_price: '5.00', currency: 'USD', created_at: '2026-01-01T00:00:00Z', note_attributes: [] });
  await ok('POST', `/api/webhooks/shopify/${websiteId}`, {
    payload: order,
    headers: {
      'content-type': 'application/json',
      'x-shopify-topic': 'orders/paid',
      'x-shopify-webhook-id': `delivery-${websiteId}`,
      'x-shopify-hmac-sha256': createHmac('sha256', 'shpss_deletion_test').update(order).digest('base64'),
    },
  });
  // A page view and a goal: the event rows, every rollup, and (through the alert) history and outbox mail.
  await t.app.events.write([
    newEvent(websiteId, 'visitor-1'),
    newEvent(websiteId, 'visitor-1', { type: 'custom', name: 'signup', path: null, source: 'api' }),
  ]);
  await ok('POST', '/api/v1/payments', {
    token: key.key,
    body: { amount: 9.5, currency: 'USD', transaction_id: `tx-${websiteId}`, datafast_visitor_id: 'visitor-1' },
  });
  await ok('POST', '/api/v1/identify', { token: key.key, body: { datafast_visitor_id: 'visitor-1', user_id: 'user-1' } });
  await ok('POST', `${site}/notes`, { token: owner.token, body: { text: 'Launch' } });
  await ok('PUT', `${site}/currency-rates/EUR`, { token: owner.token, body: { rate: 1.08 } });
  await ok('POST', `${site}/shared-links`, { token: owner.token, body: { name: 'Investors' } });
  await ok('POST', `${site}/segments`, { token: owner.token, body: { name: 'US', filters: { filter_country: 'is:US' } } });
  // Reports by mail: the switches on, the member's own choice, and a pass (its delivery rows and spike check).
  await ok('PUT', site, { token: owner.token, body: { sendWeeklyReports: true, sendViralTrafficAlerts: true } });
  await ok('PUT', `${site}/mail-reports`, { token: member.token, body: { monthly: true } });
  // At an hour into this week (the website's zone): a report is due only within three days of
  // its period's end, so a pass at the test's own time queued nothing from Thursday to Sunday.
  await runMailReports(t.app.mailReports, DateTime.now().setZone('Europe/Paris').startOf('week').plus({ hours: 1 }).toJSDate());
  // An import read to its end (a row in every imported_* table) and one still queued (its upload kept).
  const done = await createImport(t.db, websiteId, owner.id, zipOf(plausibleExport(['2020-01-01'])), 'read');
  const job = await claimNextJob(t.db, IMPORT_JOB, new Date().toISOString(), { owner: 'deletion-test', ms: 60_000 });
  expect(job?.id).toBeDefined();
  expect(await runImportJob({ db: t.db, store: t.app.eventStore, lease: { owner: 'deletion-test', ms: 60_000 }, stopping: () => false }, job!)).toBe('done');
  expect((await t.db.selectFrom('imports').select('status').where('id', '=', done.id).executeTakeFirst())?.status).toBe('done');
  const queued = await createImport(t.db, websiteId, owner.id, zipOf(plausibleExport(['2020-02-01'])), 'queued');
  // Left queued: its job is not due before the test ends, so the next website's claim skips it.
  const { job_id: queuedJob } = (await t.db.selectFrom('imports').select('job_id').where('id', '=', queued.id).executeTakeFirst())!;
  await t.db.updateTable('integration_jobs').set({ run_after: '2999-01-01T00:00:00.000Z' }).where('id', '=', queuedJob!).execute();
  // The sealed connection an Umami import keeps until it ends (stood in by the queued import's id).
  const source = { databaseUrl: 'postgres://umami:secret@127.0.0.1:5432/umami', umamiWebsiteId: '9d4c3e2a-1b2c-4d5e-8f90-123456789abc' };
  await t.db.insertInto('import_connections').values(sealUmamiSource(t.app.keyring, queued.id, websiteId, source)).execute();
  return { key };
}

describeEachEngine('website deletion', (engine) => {
  // A mail server that refuses connections: alert mail stays queued in the outbox.
  const t = useTestApp(engine, { smtpUrl: 'smtp://127.0.0.1:9' });

  it('removes every row of the website in every table, and nothing of the same account’s other website', async () => {
    const owner = await createAccount(t);
    const member = await createAccount(t);
    const doomed = await createWebsite(t, owner.token);
    const kept = await createWebsite(t, owner.token);
    const { key: doomedKey } = await populate(t, owner, doomed.id, member);
    const { key: keptKey } = await populate(t, owner, kept.id, member);
    const onlyDoomed = await createToken(t, owner, ['*'], [doomed.id]);
    const both = await createToken(t, owner, ['*'], [doomed.id, kept.id]);

    // Every table with a website_id holds a row of each website before (a new table must be filled above).
    await settleRollups(t)();
    const tables = await tablesWithWebsiteId(t.db);
    const before = await rowsReferencing(t.db, doomed.id);
    // event_relay holds events only on their way to ClickHouse (CLICKHOUSE_URL), empty here;
    // rollup_backlog only until their rollups are derived, just done (rollup-backlog.test.ts
    // deletes a website with events waiting there); rollup_relocations only while a change of
    // time zone moves the days (its row goes with the website: ON DELETE CASCADE); derived_builds
    // and funnel_builds only while a build runs.
    for (const table of tables.filter((name) => !['event_relay', 'rollup_backlog', 'rollup_relocations', 'derived_builds', 'funnel_builds'].includes(name))) expect(before[table], `no ${table} row was written for the doomed website`).toBeGreaterThan(0);
    const keptBefore = await rowsReferencing(t.db, kept.id);
    expect(Object.keys(keptBefore).sort()).toEqual(Object.keys(before).sort());

    const result = await deleteWebsite(t.db, doomed.id);
    expect(result).toMatchObject({ websiteId: doomed.id, domain: doomed.domain, deletedTokens: 1, narrowedTokens: 1 });
    expect(result!.deletedRows.events).toBe(2);

    expect(await rowsReferencing(t.db, doomed.id)).toEqual({});
    expect(await rowsReferencing(t.db, kept.id)).toEqual(keptBefore);

    // Its API key and the token limited to it stop working; the other website's key and the
    // token that could reach both keep working, now on the remaining website only.
    const account = (token: string) => t.request('GET', `${ADMIN}/account`, { token });
    expect((await account(doomedKey.key)).status).toBe(401);
    expect((await t.request('POST', '/api/v1/goals', { token: doomedKey.key, body: { datafast_visitor_id: 'visitor-1', name: 'signup' } })).status).toBe(401);
    expect((await account(onlyDoomed)).status).toBe(401);
    expect((await account(keptKey.key)).status).toBe(200);
    const stillBoth = await t.request('GET', `${ADMIN}/websites`, { token: both });
    expect(stillBoth.body.data.map((w: { id: string }) => w.id)).toEqual([kept.id]);
    expect((await t.request('GET', `${ADMIN}/websites/${doomed.id}`, { token: owner.token })).status).toBe(404);
  });

  it('answers null for a website that does not exist, and changes nothing', async () => {
    expect(await deleteWebsite(t.db, 'ffffffffffffffffffffffff')).toBeNull();
  });
});
