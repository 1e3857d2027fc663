import { afterAll, expect, it } from 'vitest';
import type { NewEvent } from '../src/modules/events/event.types.ts';
import { runMailReports } from '../src/modules/reports/report-scheduler.ts';
import { isSpike, median } from '../src/modules/reports/traffic-spike.ts';
import { type TestApp, useTestApp, writeAndDerive } from './helpers/app.ts';
import { describeEachEventEngine } from './helpers/clickhouse.ts';
import { createAccount, newEvent, type TestAccount } from './helpers/factories.ts';
import { alternativeParts, startSmtpInbox } from './helpers/smtp-inbox.ts';

// The traffic-spike alert: the hour that just ended against the median of the same hour on the
// 28 days before, with a minimum, and one mail per website in the cooldown. Time is the `now`
// handed to the pass.

const ADMIN = '/api/v1/admin';
const inbox = await startSmtpInbox();
afterAll(() => inbox.close());

const SETTINGS = { enabled: false, spikeMinVisitors: 20, spikeFactor: 3, spikeCooldownHours: 6 };
const HOUR = Date.parse('2026-03-10T10:00:00Z');
const AFTER_HOUR = new Date(HOUR + 3600_000 + 5 * 60_000);

async function spikeWebsite(t: TestApp, owner: TestAccount, name = 'spike') {
  const created = await t.request('POST', `${ADMIN}/websites`, { token: owner.token, body: { domain: `${name}-${owner.id.slice(-6)}.example.com`, timezone: 'UTC' } });
  expect(created.status, created.raw).toBe(200);
  const id = created.body.data[0].id as string;
  const updated = await t.request('PUT', `${ADMIN}/websites/${id}`, { token: owner.token, body: { sendViralTrafficAlerts: true } });
  expect(updated.body.data[0].sendViralTrafficAlerts).toBe(true);
  return id;
}

/** `usual` visitors in the same hour on each of the 28 days before, and `now` visitors in the hour starting at `hourStart`. */
function traffic(websiteId: string, usual: number, now: number, hourStart = HOUR): NewEvent[] {
  const events: NewEvent[] = [];
  for (let day = 1; day <= 28; day++) {
    for (let i = 0; i < usual; i++) events.push(newEvent(websiteId, `d${day}-${i}`, { occurredAt: new Date(HOUR - day * 86_400_000 + i * 60_000).toISOString() }));
  }
  for (let i = 0; i < now; i++) events.push(newEvent(websiteId, `h${hourStart}-${i}`, { occurredAt: new Date(hourStart + i * 60_000).toISOString() }));
  return events;
}

const spikeMails = (t: TestApp, websiteId: string) =>
  t.db.selectFrom('mail_report_deliveries').select(['kind', 'period_start']).where('website_id', '=', websiteId).where('kind', '=', 'spike').execute();

it('counts the usual as the median, at least 1', () => {
  expect(median([1, 5, 2, 8])).toBe(3.5);
  expect(median([4, 1, 9])).toBe(4);
  expect(isSpike(20, 0, SETTINGS)).toBe(true);
  expect(isSpike(19, 0, SETTINGS)).toBe(false);
  expect(isSpike(29, 10, SETTINGS)).toBe(false);
  expect(isSpike(30, 10, SETTINGS)).toBe(true);
});

describeEachEventEngine('traffic-spike alert', (engine) => {
  const t = useTestApp(engine, { smtpUrl: inbox.url, mailReports: SETTINGS, publicUrl: 'https://stats.example.test' });

  it('mails the members once for a seeded spike, then keeps quiet through the cooldown', async () => {
    const owner = await createAccount(t);
    const site = await spikeWebsite(t, owner);
    await writeAndDerive(t, traffic(site, 3, 30));

    await runMailReports(t.app.mailReports, AFTER_HOUR);
    expect(await spikeMails(t, site)).toEqual([{ kind: 'spike', period_start: '2026-03-10T10:00:00.000Z' }]);
    t.app.mailOutbox!.poke();
    const mail = await inbox.nextMailTo(owner.email);
    expect(mail.subject).toMatch(/^\[Sightline\] Traffic spike on spike-.*: 30 visitors in an hour$/);
    const { text, html } = alternativeParts(mail);
    expect(text).toContain('30 visitors in the hour 2026-03-10 10:00–11:00 UTC; that hour usually has about 3.');
    expect(html).toContain('<strong>30</strong>');
    expect(mail.headers['list-unsubscribe']).toMatch(/^<https:\/\/stats\.example\.test\/mail\/unsubscribe\//);

    // The same hour again (another pass, another instance): nothing more.
    await runMailReports(t.app.mailReports, new Date(AFTER_HOUR.getTime() + 20 * 60_000));
    // The next hour spikes too, inside the cooldown: no mail.
    await writeAndDerive(t, traffic(site, 0, 40, HOUR + 3600_000));
    await runMailReports(t.app.mailReports, new Date(AFTER_HOUR.getTime() + 3600_000));
    expect(await spikeMails(t, site)).toHaveLength(1);
  });

  it('mails nothing for ordinary traffic, nor for a small site under the minimum', async () => {
    const owner = await createAccount(t);
    const ordinary = await spikeWebsite(t, owner);
    const tiny = await spikeWebsite(t, owner, 'tiny');
    await writeAndDerive(t, [...traffic(ordinary, 10, 25), ...traffic(tiny, 0, 12)]);
    await runMailReports(t.app.mailReports, AFTER_HOUR);
    expect(await spikeMails(t, ordinary)).toEqual([]);
    expect(await spikeMails(t, tiny)).toEqual([]);
    // The hour was checked all the same, once.
    const checks = await t.db.selectFrom('mail_spike_checks').select(['website_id', 'checked_hour', 'last_spike_at']).where('website_id', 'in', [ordinary, tiny]).execute();
    expect(checks).toHaveLength(2);
    for (const check of checks) expect(check).toMatchObject({ checked_hour: '2026-03-10T10:00:00.000Z', last_spike_at: null });
  });
});
