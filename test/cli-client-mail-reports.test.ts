import { describe, expect, it } from 'vitest';
import { expectExit, parseJson, useCliHarness } from './helpers/cli-client.ts';
import { addMember, createAccount, createWebsite } from './helpers/factories.ts';

// Reports by mail from the command line, as processes against a listening server: the website's
// switches (websites update) and the caller's own choice (mail-reports show / set).

process.env.SIGHTLINE_FORCE_TTY = '250';
process.env.TZ = 'UTC';

describe('sightline mail-reports and the websites update switches', { timeout: 90_000 }, () => {
  const cli = useCliHarness();
  const { t } = cli;

  it("websites update turns the website's reports and spike alerts on and off", async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const on = await cli.run(['websites', 'update', website.id, '--weekly-reports', '--traffic-spike-alerts', '--json'], { token: owner.token });
    expectExit(on, 0);
    expect(parseJson(on)).toMatchObject([{ sendWeeklyReports: true, sendViralTrafficAlerts: true }]);
    const off = await cli.run(['websites', 'update', website.id, '--no-traffic-spike-alerts'], { token: owner.token });
    expectExit(off, 0);
    expect(off.stdout).toMatch(/Weekly reports:\s+yes/);
    expect(off.stdout).toMatch(/Traffic-spike alerts:\s+no/);
  });

  it("mail-reports show and set read and change the caller's own subscription only", async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const viewer = await createAccount(t);
    await addMember(t, website.id, viewer.id, 'viewer');
    const shown = await cli.run(['mail-reports', 'show', '-w', website.id], { token: viewer.token });
    expectExit(shown, 0);
    expect(shown.stdout).toMatch(/Weekly report:\s+no \(the website sends none\)/);

    const set = await cli.run(['mail-reports', 'set', '--monthly', '--no-spike', '-w', website.id, '--json'], { token: viewer.token });
    expectExit(set, 0);
    expect(parseJson(set)).toEqual([{ weekly: true, monthly: true, spike: false, sendWeeklyReports: false, sendViralTrafficAlerts: false }]);
    const nothing = await cli.run(['mail-reports', 'set', '-w', website.id], { token: viewer.token });
    expectExit(nothing, 2);
    const rows = await t.db.selectFrom('mail_report_subscriptions').select(['account_id', 'kind', 'enabled']).where('website_id', '=', website.id).orderBy('kind').execute();
    expect(rows.map((row) => [row.account_id, row.kind, Boolean(row.enabled)])).toEqual([
      [viewer.id, 'monthly', true],
      [viewer.id, 'spike', false],
    ]);
  });
});
