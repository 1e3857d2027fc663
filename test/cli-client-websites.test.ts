import { describe, expect, it } from 'vitest';
import { expectExit, parseJson, useCliHarness } from './helpers/cli-client.ts';
import { UNKNOWN_ID, createAccount, createApiKey, createToken, createWebsite } from './helpers/factories.ts';

// websites, tokens and apikeys as processes against a listening server.

// These tests read whole cells: the commands run 250 columns wide, in UTC (times in tables are
// shortened to the terminal's local time). Fitting tables to 80 columns is tested in cli-output.test.ts.
// Tables as a 250-column terminal shows them (into a pipe they would be tab-separated values).
process.env.SIGHTLINE_FORCE_TTY = '250';
process.env.TZ = 'UTC';

const TOKEN = /^dft_[0-9A-Za-z]{36}$/;
const KEY = /^df_[0-9A-Za-z]{36}$/;

describe('sightline websites, tokens and apikeys', { timeout: 90_000 }, () => {
  const cli = useCliHarness();
  const { t } = cli;

  async function status(token: string, url = '/api/v1/admin/account') {
    return (await t.request('GET', url, { token })).status;
  }

  describe('websites', () => {
    it('create prints the new website and list shows it in a table and as JSON', async () => {
      const owner = await createAccount(t);
      const domain = `cli-${Date.now()}.example.com`;
      const created = await cli.run(['websites', 'create', '--domain', domain, '--timezone', 'Europe/Paris', '--name', 'CLI site'], {
        token: owner.token,
      });
      expectExit(created, 0);
      const id = /^Id: +([0-9a-f]{24})$/m.exec(created.stdout)?.[1];
      expect(id, created.stdout).toBeDefined();
      expect(created.stdout).toMatch(new RegExp(`^Domain: +${domain}$`, 'm'));
      expect(created.stdout).toMatch(/^Currency: +USD$/m);
      expect(created.stderr).toBe(`Created website ${domain} (${id}).\n`);

      const table = await cli.run(['websites', 'list'], { token: owner.token });
      expectExit(table, 0);
      const lines = table.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^ID +DOMAIN +NAME +TIMEZONE +CURRENCY +ROLE$/);
      expect(lines.slice(1)).toEqual([expect.stringMatching(new RegExp(`^${id} +${domain} +CLI site +Europe/Paris +USD +owner$`))]);

      const json = await cli.run(['websites', 'list', '--json'], { token: owner.token });
      expectExit(json, 0);
      expect(json.stderr).toBe('');
      const api = await t.request('GET', '/api/v1/admin/websites', { token: owner.token });
      expect(parseJson(json)).toEqual(api.body.data);
    });

    it('get takes a domain; update changes only the options given and --no- options clear', async () => {
      const owner = await createAccount(t);
      const website = await createWebsite(t, owner.token);
      await t.request('PUT', `/api/v1/admin/websites/${website.id}`, { token: owner.token, body: { kpiColorScheme: 'teal' } });

      const got = await cli.run(['websites', 'get', website.domain], { token: owner.token });
      expectExit(got, 0);
      expect(got.stdout).toMatch(new RegExp(`^Id: +${website.id}$`, 'm'));
      expect(got.stdout).toMatch(/^KPI color scheme: +teal$/m);

      const updated = await cli.run(
        [
          'websites', 'update', website.id, '--currency', 'EUR', '--no-kpi-color-scheme', '--cookieless',
          '--excluded-paths', '/admin/*, /preview/*', '--json',
        ],
        { token: owner.token },
      );
      expectExit(updated, 0);
      const [item] = parseJson(updated);
      expect(item).toMatchObject({
        id: website.id,
        currency: 'EUR',
        kpiColorScheme: null,
        isCookieless: true,
        excludedPaths: ['/admin/*', '/preview/*'],
        timezone: 'Europe/Paris',
        name: 'Test site',
      });
      const row = await t.db.selectFrom('websites').selectAll().where('id', '=', website.id).executeTakeFirstOrThrow();
      expect(row).toMatchObject({ currency: 'EUR', kpi_color_scheme: null });
    });

    it('derived-data says ready, then rebuilding with the zones while a change of time zone moves the days', async () => {
      const owner = await createAccount(t);
      const website = await createWebsite(t, owner.token);
      const ready = await cli.run(['websites', 'derived-data', website.domain], { token: owner.token });
      expectExit(ready, 0);
      expect(ready.stdout).toMatch(/^State: +ready$/m);
      expect(ready.stdout).toMatch(/^Progress: +-$/m);

      await t.app.derivedDataWorker.stop();
      try {
        const changed = await t.request('PUT', `/api/v1/admin/websites/${website.id}`, { token: owner.token, body: { timezone: 'Asia/Tokyo' } });
        expect(changed.status, changed.raw).toBe(200);
        const table = await cli.run(['websites', 'derived-data', website.id], { token: owner.token });
        expectExit(table, 0);
        expect(table.stdout).toMatch(/^State: +rebuilding$/m);
        expect(table.stdout).toMatch(/^From timezone: +Europe\/Paris$/m);
        expect(table.stdout).toMatch(/^To timezone: +Asia\/Tokyo$/m);
        const json = await cli.run(['websites', 'derived-data', website.id, '--json'], { token: owner.token });
        expectExit(json, 0);
        const api = await t.request('GET', `/api/v1/admin/websites/${website.id}/derived-data`, { token: owner.token });
        expect(parseJson(json)).toEqual(api.body.data);
      } finally {
        t.app.derivedDataWorker.start();
        await t.app.derivedDataWorker.settle();
      }
    });

    it('update --body - reads JSON from stdin and the flags win over it', async () => {
      const owner = await createAccount(t);
      const website = await createWebsite(t, owner.token);
      const updated = await cli.run(['websites', 'update', website.domain, '--body', '-', '--name', 'From flag', '--json'], {
        token: owner.token,
        input: JSON.stringify({ name: 'From body', excludedCountries: ['FR', 'DE'] }),
      });
      expectExit(updated, 0);
      expect(parseJson(updated)[0]).toMatchObject({ name: 'From flag', excludedCountries: ['FR', 'DE'] });
    });

    it('update without anything to change is a usage error (exit 2) and sends nothing', async () => {
      const owner = await createAccount(t);
      const website = await createWebsite(t, owner.token);
      const result = await cli.run(['websites', 'update', website.id], { token: owner.token });
      expectExit(result, 2);
      expect(result.stderr).toMatch(/^sightline: nothing to change/);
    });

    it('an unknown website exits 1: by domain with a message of the CLI, by id with the 404 of the server', async () => {
      const owner = await createAccount(t);
      const byDomain = await cli.run(['websites', 'get', 'nowhere.example.com'], { token: owner.token });
      expectExit(byDomain, 1);
      expect(byDomain.stderr).toBe('sightline: no website with the domain "nowhere.example.com" among the websites this token can see\n');

      const byId = await cli.run(['websites', 'get', UNKNOWN_ID, '--json'], { token: owner.token });
      expectExit(byId, 1);
      expect(byId.stdout).toBe('');
      expect(byId.stderr).toMatch(/^sightline: .*not found.* \(HTTP 404\)\n$/i);
    });

    it('delete needs --yes without a terminal (exit 2); with --yes the server refuses it (exit 1) and the website stays', async () => {
      const owner = await createAccount(t);
      const website = await createWebsite(t, owner.token);
      const unconfirmed = await cli.run(['websites', 'delete', website.id], { token: owner.token });
      expectExit(unconfirmed, 2);
      expect(unconfirmed.stderr).toBe(
        `sightline: delete website ${website.id}: add --yes to confirm (there is no terminal to ask on); nothing was changed\n`,
      );

      const refused = await cli.run(['websites', 'delete', website.id, '--yes'], { token: owner.token });
      expectExit(refused, 1);
      expect(refused.stderr).toMatch(/dashboard.*\(HTTP 403\)\n$/);
      expect(await status(owner.token, `/api/v1/admin/websites/${website.id}`)).toBe(200);
    });
  });

  describe('tokens', () => {
    it('create prints the raw token alone on stdout, once, with a warning on stderr; the token works with what was asked', async () => {
      const owner = await createAccount(t);
      const website = await createWebsite(t, owner.token);
      const created = await cli.run(
        ['tokens', 'create', '--name', 'ci', '--permissions', 'websites:read,analytics:read', '--websites', website.domain],
        { token: owner.token },
      );
      expectExit(created, 0);
      const raw = created.stdout.trim();
      expect(created.stdout).toBe(`${raw}\n`);
      expect(raw).toMatch(TOKEN);
      expect(created.stderr).toMatch(/will not be shown again/);
      expect(created.stderr).toContain(`with websites:read, analytics:read on ${website.id}`);
      expect(created.stderr).not.toContain(raw);

      const listed = (await t.request('GET', '/api/v1/admin/access-tokens', { token: owner.token })).body.data;
      expect(listed.find((item: any) => item.name === 'ci')).toMatchObject({ permissions: ['websites:read', 'analytics:read'], websiteIds: [website.id] });
      expect(await status(raw, '/api/v1/admin/websites')).toBe(200);
      expect(await status(raw, '/api/v1/admin/access-tokens')).toBe(403);

      // Listing shows the masked form only.
      const table = await cli.run(['tokens', 'list'], { token: owner.token });
      expectExit(table, 0);
      expect(table.stdout).toMatch(/^ID +NAME +TOKEN +PERMISSIONS +WEBSITES +LAST USED +EXPIRES$/m);
      expect(table.stdout).toContain(`${raw.slice(0, 8)}...${raw.slice(-4)}`);
      expect(table.stdout).not.toContain(raw);
    });

    it('create --json prints the new token in the data and still warns; list --json matches the API', async () => {
      const owner = await createAccount(t);
      const created = await cli.run(['tokens', 'create', '--json'], { token: owner.token });
      expectExit(created, 0);
      const [item] = parseJson(created);
      expect(item).toMatchObject({ permissions: ['*'], websiteIds: [], token: expect.stringMatching(TOKEN) });
      expect(created.stderr).toMatch(/holds the raw token\. Store it now: it will not be shown again/);
      expect(await status(item.token)).toBe(200);

      const list = await cli.run(['tokens', 'list', '--json'], { token: owner.token });
      expectExit(list, 0);
      expect(parseJson(list)).toEqual((await t.request('GET', '/api/v1/admin/access-tokens', { token: owner.token })).body.data);
    });

    it('revoke without --yes and without a terminal exits 2 and the token keeps working; with --yes it stops working', async () => {
      const owner = await createAccount(t);
      const victim = await t.request('POST', '/api/v1/admin/access-tokens', { token: owner.token, body: { name: 'victim' } });
      const { id, token } = victim.body.data[0];

      const unconfirmed = await cli.run(['tokens', 'revoke', id], { token: owner.token });
      expectExit(unconfirmed, 2);
      expect(unconfirmed.stderr).toMatch(/add --yes to confirm/);
      expect(await status(token)).toBe(200);

      const revoked = await cli.run(['tokens', 'revoke', id, '--yes'], { token: owner.token });
      expectExit(revoked, 0);
      expect(revoked.stdout).toBe('');
      expect(revoked.stderr).not.toBe('');
      expect(await status(token)).toBe(401);
    });

    it('create beyond the caller\'s own permissions exits 1 with the 403 message', async () => {
      const owner = await createAccount(t);
      const narrow = await createToken(t, owner, ['api-keys:write', 'api-keys:read']);
      const result = await cli.run(['tokens', 'create', '--permissions', 'websites:write'], { token: narrow });
      expectExit(result, 1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/\(HTTP 403\)\n$/);
    });
  });

  describe('apikeys', () => {
    it('create prints the raw key once; list shows it masked, in a table and as JSON', async () => {
      const owner = await createAccount(t);
      const website = await createWebsite(t, owner.token);
      const created = await cli.run(['apikeys', 'create', '-w', website.domain, '--name', 'backend'], { token: owner.token });
      expectExit(created, 0);
      const raw = created.stdout.trim();
      expect(raw).toMatch(KEY);
      expect(created.stderr).toMatch(/Created API key "backend" \([0-9a-f]{24}\) for website [0-9a-f]{24}\.\n.*will not be shown again/);
      expect(await status(raw, `/api/v1/admin/websites/${website.id}`)).toBe(200);

      const table = await cli.run(['apikeys', 'list', '--website', website.id], { token: owner.token });
      expectExit(table, 0);
      expect(table.stdout).toMatch(new RegExp(`^[0-9a-f]{24} +backend +${raw.slice(0, 7)}\\.\\.\\.${raw.slice(-4)} +(never|\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}) +\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}$`, 'm'));
      expect(table.stdout).not.toContain(raw);

      const json = await cli.run(['apikeys', 'list', '-w', website.id, '--json'], { token: owner.token });
      expectExit(json, 0);
      expect(parseJson(json)).toEqual([expect.objectContaining({ name: 'backend', websiteId: website.id, displayKey: expect.any(String) })]);
      expect(json.stdout).not.toContain(raw);
    });

    it('roll replaces the secret (the old one stops working) and prints the new one once; --json carries it', async () => {
      const owner = await createAccount(t);
      const website = await createWebsite(t, owner.token);
      const key = await createApiKey(t, owner.token, website.id, 'rolling');

      const unconfirmed = await cli.run(['apikeys', 'roll', '-w', website.id, key.id], { token: owner.token });
      expectExit(unconfirmed, 2);
      expect(await status(key.key, `/api/v1/admin/websites/${website.id}`)).toBe(200);

      const rolled = await cli.run(['apikeys', 'roll', '-w', website.id, key.id, '--yes', '--json'], { token: owner.token });
      expectExit(rolled, 0);
      const [item] = parseJson(rolled);
      expect(item).toMatchObject({ id: key.id, name: 'rolling', key: expect.stringMatching(KEY) });
      expect(item.key).not.toBe(key.key);
      expect(rolled.stderr).toMatch(/will not be shown again/);
      expect(await status(key.key, `/api/v1/admin/websites/${website.id}`)).toBe(401);
      expect(await status(item.key, `/api/v1/admin/websites/${website.id}`)).toBe(200);
    });

    it('revoke --yes removes the key; without --yes it exits 2 and the key stays', async () => {
      const owner = await createAccount(t);
      const website = await createWebsite(t, owner.token);
      const key = await createApiKey(t, owner.token, website.id);

      const unconfirmed = await cli.run(['apikeys', 'revoke', '-w', website.id, key.id, '--json'], { token: owner.token });
      expectExit(unconfirmed, 2);
      expect(unconfirmed.stdout).toBe('');
      expect(await status(key.key, `/api/v1/admin/websites/${website.id}`)).toBe(200);

      const revoked = await cli.run(['apikeys', 'revoke', '-w', website.id, key.id, '--yes', '--json'], { token: owner.token });
      expectExit(revoked, 0);
      expect(parseJson(revoked)).toEqual([{ deleted: true }]);
      expect(await status(key.key, `/api/v1/admin/websites/${website.id}`)).toBe(401);
    });

    it('a missing --website is a usage error (exit 2)', async () => {
      const result = await cli.run(['apikeys', 'list'], { token: 'dft_unused' });
      expectExit(result, 2);
      expect(result.stderr).toMatch(/required option '-w, --website <website>' not specified/);
    });
  });
});
