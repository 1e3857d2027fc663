import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { NewEvent } from '../src/modules/events/event.types.ts';
import { openCredentials } from '../src/modules/integrations/credentials.ts';
import { HAS_SCRIPT, expectExit, parseJson, useCliHarness } from './helpers/cli-client.ts';
import { addMember, createAccount, createApiKey, createWebsite, newEvent } from './helpers/factories.ts';

// team, invitations, integrations and analytics as processes against a listening server.

// These tests read whole cells: the commands run 250 columns wide, in UTC (times in tables are
// shortened to the terminal's local time). Fitting tables to 80 columns is tested in cli-output.test.ts.
// Tables as a 250-column terminal shows them (into a pipe they would be tab-separated values).
process.env.SIGHTLINE_FORCE_TTY = '250';
process.env.TZ = 'UTC';

describe('sightline team, invitations, integrations and analytics', { timeout: 90_000 }, () => {
  const cli = useCliHarness();
  const { t } = cli;

  async function ownerWithWebsite() {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    return { owner, website };
  }

  async function storedCredentials(websiteId: string, provider: string) {
    const row = await t.db
      .selectFrom('integrations')
      .selectAll()
      .where('website_id', '=', websiteId)
      .where('provider', '=', provider)
      .executeTakeFirst();
    return row ? openCredentials(t.app.keyring, row) : undefined;
  }

  describe('team and invitations', () => {
    it('invite, see the invitation, accept it as the invitee, then remove the member with --yes', async () => {
      const { owner, website } = await ownerWithWebsite();
      const invitee = await createAccount(t, 'Invited Ivy');

      const invited = await cli.run(['team', 'invite', '-w', website.domain, '--email', invitee.email, '--role', 'member'], { token: owner.token });
      expectExit(invited, 0);
      const invitationId = /\(invitation ([0-9a-f]{24}), role member\)\.\n/.exec(invited.stderr)?.[1];
      expect(invitationId, invited.stderr).toBeDefined();
      // The owner passes the word on: the output says what the invitee runs.
      expect(invited.stderr).toContain(`"sightline invitations accept ${invitationId}"`);

      const pending = await cli.run(['team', 'list', '-w', website.id], { token: owner.token });
      expectExit(pending, 0);
      expect(pending.stdout).toMatch(new RegExp(`^${owner.id} +Test User +${owner.email} +owner +\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}$`, 'm'));
      expect(pending.stdout).toContain('Pending invitations:');
      expect(pending.stdout).toMatch(new RegExp(`^${invitationId} +${invitee.email} +member +\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}$`, 'm'));

      const mine = await cli.run(['invitations', 'list', '--json'], { token: invitee.token });
      expectExit(mine, 0);
      expect(parseJson(mine)).toEqual([{ invitationId, websiteId: website.id, domain: website.domain, role: 'member', invitedAt: expect.any(String) }]);

      const accepted = await cli.run(['invitations', 'accept', invitationId!], { token: invitee.token });
      expectExit(accepted, 0);
      expect(accepted.stderr).toContain(`(website ${website.id}, role member)`);

      const team = await cli.run(['team', 'list', '-w', website.id, '--json'], { token: owner.token });
      expectExit(team, 0);
      const body = parseJson(team);
      expect(body.invitations).toEqual([]);
      expect(body.data.map((member: any) => [member.email, member.role])).toEqual(
        expect.arrayContaining([[owner.email, 'owner'], [invitee.email, 'member']]),
      );

      const unconfirmed = await cli.run(['team', 'remove', '-w', website.id, '--email', invitee.email], { token: owner.token });
      expectExit(unconfirmed, 2);
      expect(unconfirmed.stderr).toMatch(/add --yes to confirm/);
      expect((await t.request('GET', `/api/v1/admin/websites/${website.id}`, { token: invitee.token })).status).toBe(200);

      const removed = await cli.run(['team', 'remove', '-w', website.id, '--user-id', invitee.id, '--yes', '--json'], { token: owner.token });
      expectExit(removed, 0);
      expect(parseJson(removed)).toEqual([{ message: expect.any(String), removed: 'member' }]);
      expect((await t.request('GET', `/api/v1/admin/websites/${website.id}`, { token: invitee.token })).status).toBe(404);
    });

    it('a member who is not the owner cannot invite (exit 1, 403); invitations list is empty as a table', async () => {
      const { website } = await ownerWithWebsite();
      const member = await createAccount(t);
      await addMember(t, website.id, member.id, 'member');
      const refused = await cli.run(['team', 'invite', '-w', website.id, '--email', 'someone@example.com'], { token: member.token });
      expectExit(refused, 1);
      expect(refused.stderr).toMatch(/\(HTTP 403\)\n$/);
      expect(await t.db.selectFrom('invitations').selectAll().where('website_id', '=', website.id).execute()).toEqual([]);

      const none = await cli.run(['invitations', 'list'], { token: member.token });
      expectExit(none, 0);
      expect(none.stdout).toBe('');
      expect(none.stderr).toBe('No pending invitations.\n');
    });

    it('remove needs exactly one of --email and --user-id (exit 2); an unknown role is a usage error', async () => {
      const both = await cli.run(['team', 'remove', '-w', 'example.com', '--yes'], { token: 'dft_unused' });
      expectExit(both, 2);
      expect(both.stderr).toBe('sightline: give either --email or --user-id\n');
      const role = await cli.run(['team', 'invite', '-w', 'example.com', '--email', 'a@example.com', '--role', 'owner'], { token: 'dft_unused' });
      expectExit(role, 2);
      expect(role.stderr).toMatch(/Allowed choices are viewer, member/);
    });
  });

  describe('integrations', () => {
    it('connect reads a credential from its environment variable, never from argv, and never prints it', async () => {
      const { owner, website } = await ownerWithWebsite();
      const secret = `rk_live_${randomBytes(12).toString('hex')}`;
      const connected = await cli.run(['integrations', 'connect', 'provider-one', '-w', website.id], {
        token: owner.token,
        env: { PROVIDER_ONE_RESTRICTED_KEY: secret },
      });
      expectExit(connected, 0);
      expect(connected.stdout + connected.stderr).not.toContain(secret);
      expect(await storedCredentials(website.id, 'provider-one')).toEqual({ providerOneRestrictedKey: secret });

      const table = await cli.run(['integrations', 'status', '-w', website.id], { token: owner.token });
      expectExit(table, 0);
      expect(table.stdout.split('\n')[0]).toMatch(/^PROVIDER +CONNECTED +SINCE +RESYNC +WEBHOOK$/);
      expect(table.stdout).toMatch(/^provider-one +yes +\d{4}-\d{2}-\d{2} \d{2}:\d{2} +- +no secret$/m);
      expect(table.stdout).toMatch(/^provider-two +no +- +- +no secret$/m);
      expect(table.stdout).not.toContain(secret);
    });

    it('connect reads a JSON object of fields from stdin, or one line for a single field; resync and disconnect', async () => {
      const { owner, website } = await ownerWithWebsite();
      const two = { providerTwoApiKey: `key_${randomBytes(8).toString('hex')}`, providerTwoStoreId: 'store_42' };
      const json = await cli.run(['integrations', 'connect', 'provider-two', '-w', website.id, '--json'], { token: owner.token, input: JSON.stringify(two) });
      expectExit(json, 0);
      expect(parseJson(json)).toEqual([expect.objectContaining({ provider: 'provider-two', connected: true })]);
      expect(json.stdout + json.stderr).not.toContain(two.providerTwoApiKey);
      expect(await storedCredentials(website.id, 'provider-two')).toEqual(two);

      const four = `pk_${randomBytes(8).toString('hex')}`;
      const line = await cli.run(['integrations', 'connect', 'provider-four', '-w', website.id], { token: owner.token, input: `${four}\n` });
      expectExit(line, 0);
      expect(await storedCredentials(website.id, 'provider-four')).toEqual({ providerFourApiKey: four });

      const resync = await cli.run(['integrations', 'resync', '-w', website.id, '--json'], { token: owner.token });
      expectExit(resync, 0);
      expect(parseJson(resync)).toEqual([expect.objectContaining({ resync: expect.objectContaining({ status: 'queued' }) })]);

      const status = await cli.run(['integrations', 'status', '-w', website.id, '--json'], { token: owner.token });
      expectExit(status, 0);
      const [statuses] = parseJson(status);
      expect(statuses['provider-two'].connected).toBe(true);
      expect(statuses['provider-four']).toMatchObject({ connected: true, resync: { status: 'queued' } });
      expect(status.stdout).not.toContain(four);

      const unconfirmed = await cli.run(['integrations', 'disconnect', 'provider-two', '-w', website.id], { token: owner.token });
      expectExit(unconfirmed, 2);
      expect(await storedCredentials(website.id, 'provider-two')).toEqual(two);

      const disconnected = await cli.run(['integrations', 'disconnect', 'provider-two', '-w', website.id, '--yes'], { token: owner.token });
      expectExit(disconnected, 0);
      expect(await storedCredentials(website.id, 'provider-two')).toBeUndefined();
    });

    it('connect with two fields missing and one line on stdin exits 2 naming the variables, and connects nothing', async () => {
      const { owner, website } = await ownerWithWebsite();
      const result = await cli.run(['integrations', 'connect', 'provider-three', '-w', website.id], { token: owner.token, input: 'only-one-value' });
      expectExit(result, 2);
      expect(result.stderr).toMatch(/providerThreeAccessToken and providerThreeOrgId/);
      expect(result.stderr).not.toContain('only-one-value');
      expect(await storedCredentials(website.id, 'provider-three')).toBeUndefined();

      const empty = await cli.run(['integrations', 'connect', 'provider-three', '-w', website.id], {
        token: owner.token,
        env: { PROVIDER_THREE_ACCESS_TOKEN: 'tok_abc' },
      });
      expectExit(empty, 2);
      expect(empty.stderr).toBe('sightline: missing providerThreeOrgId: set PROVIDER_THREE_ORG_ID, or pipe the value(s) to stdin\n');
    });

    it('connect of provider-five is a usage error; the help names the variables', async () => {
      const five = await cli.run(['integrations', 'connect', 'provider-five', '-w', 'example.com'], { token: 'dft_unused' });
      expectExit(five, 2);
      expect(five.stderr).toMatch(/provider-five and provider-six are connected by "webhook-secret"/);

      const help = await cli.run(['integrations', '--help']);
      expectExit(help, 0);
      for (const name of ['PROVIDER_ONE_RESTRICTED_KEY', 'PROVIDER_TWO_API_KEY', 'PROVIDER_TWO_STORE_ID', 'PROVIDER_THREE_ACCESS_TOKEN', 'PROVIDER_THREE_ORG_ID', 'PROVIDER_FOUR_API_KEY']) {
        expect(help.stdout).toContain(name);
      }
    });

    it('webhook-secret connects provider-five from stdin and prints the address to paste; resync takes a provider', async () => {
      const { owner, website } = await ownerWithWebsite();
      const secret = `shpss_${randomBytes(10).toString('hex')}`;
      const stored = await cli.run(['integrations', 'webhook-secret', 'provider-five', '-w', website.id], { token: owner.token, input: `${secret}\n` });
      expectExit(stored, 0);
      expect(stored.stdout + stored.stderr).toContain(`/api/webhooks/shopify/${website.id}`);
      expect(stored.stdout + stored.stderr).not.toContain(secret);
      const status = await cli.run(['integrations', 'status', '-w', website.id, '--json'], { token: owner.token });
      expectExit(status, 0);
      expect(JSON.parse(status.stdout)[0]['provider-five']).toMatchObject({ connected: true, webhook: { secretSet: true } });
      expect(status.stdout).not.toContain(secret);

      // provider-one needs its credential first: the server's 400 is the CLI's exit 1.
      const early = await cli.run(['integrations', 'webhook-secret', 'provider-one', '-w', website.id], { token: owner.token, env: { WEBHOOK_SIGNING_SECRET: 'whsec_abc' } });
      expectExit(early, 1);
      expect(early.stderr).toMatch(/provider-one is not connected/);
      const notConnected = await cli.run(['integrations', 'resync', 'provider-one', '-w', website.id], { token: owner.token });
      expectExit(notConnected, 1);
      expect(notConnected.stderr).toMatch(/provider-one is not connected/);
      const five = await cli.run(['integrations', 'resync', 'provider-five', '-w', website.id], { token: owner.token });
      expectExit(five, 2);
    });

    it('rates set, list and delete a currency rate, and list what counts nowhere', async () => {
      const { owner, website } = await ownerWithWebsite();
      const set = await cli.run(['rates', 'set', 'eur', '1.08', '-w', website.id], { token: owner.token });
      expectExit(set, 0);
      expect(set.stdout + set.stderr).toContain('EUR counts at 1.08.');
      const bad = await cli.run(['rates', 'set', 'EUR', '-2', '-w', website.id], { token: owner.token });
      expectExit(bad, 2);
      const listed = await cli.run(['rates', 'list', '-w', website.id, '--json'], { token: owner.token });
      expectExit(listed, 0);
      expect(JSON.parse(listed.stdout)).toEqual({ data: [{ currency: 'EUR', rate: 1.08, updatedAt: expect.any(String) }], currency: 'USD', unconverted: [] });
      const unconfirmed = await cli.run(['rates', 'delete', 'EUR', '-w', website.id], { token: owner.token });
      expectExit(unconfirmed, 2);
      const deleted = await cli.run(['rates', 'delete', 'EUR', '-w', website.id, '--yes'], { token: owner.token });
      expectExit(deleted, 0);
      expect(await t.db.selectFrom('currency_rates').selectAll().where('website_id', '=', website.id).execute()).toEqual([]);
    });

    it.skipIf(!HAS_SCRIPT)('on a terminal, connect asks with a hidden prompt and disconnect asks for confirmation', async () => {
      const { owner, website } = await ownerWithWebsite();
      const secret = `rk_${randomBytes(10).toString('hex')}`;
      const connected = await cli.runInTerminal(
        ['integrations', 'connect', 'provider-one', '-w', website.id],
        [{ waitFor: /providerOneRestrictedKey for provider-one \(input hidden\): /, type: secret }],
        { token: owner.token },
      );
      expectExit(connected, 0);
      expect(connected.stdout).not.toContain(secret);
      expect(await storedCredentials(website.id, 'provider-one')).toEqual({ providerOneRestrictedKey: secret });

      const declined = await cli.runInTerminal(
        ['integrations', 'disconnect', 'provider-one', '-w', website.id],
        [{ waitFor: /Disconnect provider-one from \w+\? Its stored credentials are deleted\. \[y\/N\] /, type: 'n' }],
        { token: owner.token },
      );
      expectExit(declined, 1);
      expect(declined.stdout).toContain('sightline: cancelled; nothing was changed');
      expect(await storedCredentials(website.id, 'provider-one')).toBeDefined();

      const confirmed = await cli.runInTerminal(
        ['integrations', 'disconnect', 'provider-one', '-w', website.id],
        [{ waitFor: /\[y\/N\] /, type: 'y' }],
        { token: owner.token },
      );
      expectExit(confirmed, 0);
      expect(await storedCredentials(website.id, 'provider-one')).toBeUndefined();
    });
  });

  describe('analytics', () => {
    function pageview(websiteId: string, visitorId: string): NewEvent {
      return newEvent(websiteId, visitorId, { sessionId: `s-${visitorId}` });
    }

    it('timeseries prints buckets and a total row, and with --json the series with its siblings', async () => {
      const { owner, website } = await ownerWithWebsite();
      await t.app.events.write([pageview(website.id, 'a'), pageview(website.id, 'a'), pageview(website.id, 'b')]);

      const table = await cli.run(['analytics', 'timeseries', '-w', website.domain, '--fields', 'visitors,pageviews', '--interval', 'month'], {
        token: owner.token,
      });
      expectExit(table, 0);
      const lines = table.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^MONTH +VISITORS +PAGEVIEWS$/);
      expect(lines.at(-1)).toMatch(/^total +2 +3$/);
      expect(lines).toHaveLength(1 + 12 + 1);
      expect(table.stderr).toBe('Time zone Europe/Paris; revenue in USD.\n');

      const json = await cli.run(['analytics', 'timeseries', '-w', website.id, '--fields', 'pageviews', '--json'], { token: owner.token });
      expectExit(json, 0);
      const body = parseJson(json);
      expect(body).toMatchObject({ fields: ['pageviews'], interval: 'day', timezone: 'Europe/Paris', currency: 'USD', totals: { pageviews: 3 } });
      expect(body.data.length).toBeGreaterThanOrEqual(30);
      expect(body.status).toBeUndefined();
    });

    it('a website API key needs no --website; --start-at alone is a usage error; an unknown field exits 1', async () => {
      const { owner, website } = await ownerWithWebsite();
      const key = await createApiKey(t, owner.token, website.id);
      const keyed = await cli.run(['analytics', 'timeseries', '--interval', 'week', '--json'], { token: key.key });
      expectExit(keyed, 0);
      expect(parseJson(keyed)).toMatchObject({ interval: 'week', fields: ['visitors', 'pageviews'] });

      const half = await cli.run(['analytics', 'timeseries', '-w', website.id, '--start-at', '2026-01-01'], { token: owner.token });
      expectExit(half, 2);
      expect(half.stderr).toBe('sightline: give --start-at and --end-at together, or neither\n');

      const unknown = await cli.run(['analytics', 'timeseries', '-w', website.id, '--fields', 'bounces'], { token: owner.token });
      expectExit(unknown, 1);
      expect(unknown.stderr).toMatch(/bounces.*\(HTTP 400\)\n$/);
    });
  });
});
