import { describe, expect, it } from 'vitest';
import { expectExit, parseJson, useCliHarness } from './helpers/cli-client.ts';
import { createAccount, createWebsite } from './helpers/factories.ts';

// sightline shared-links as a process against a listening server: the URL printed once, alone on
// stdout; a password read from stdin, never from an argument; revoking needs --yes without a
// terminal; and websites update --public-dashboard turns the website setting on.

process.env.SIGHTLINE_FORCE_TTY = '250';

describe('sightline shared-links', { timeout: 90_000 }, () => {
  const cli = useCliHarness();
  const { t } = cli;

  it('switches sharing on, creates a link with a password from stdin, lists it masked, clears the password and revokes it', async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const as = { token: owner.token };

    expectExit(await cli.run(['websites', 'update', website.id, '--public-dashboard'], as), 0);
    const settings = await t.request('GET', `/api/v1/admin/websites/${website.id}`, as);
    expect(settings.body.data[0].isPublicDashboardEnabled).toBe(true);

    const created = await cli.run(['shared-links', 'create', '-w', website.id, '--name', 'Board', '--password', '--yes'], { ...as, input: 'a long cli password\n' });
    expectExit(created, 0);
    const url = created.stdout.trim();
    expect(url).toMatch(new RegExp(`^${t.config.publicUrl}/share/shr_[0-9A-Za-z]{32}$`));
    expect(created.stderr).toMatch(/will not be shown again/);
    const slug = url.split('/').pop()!;
    const state = await t.request('GET', `/api/v1/share/${slug}`);
    expect(state.body.data).toEqual([{ linkName: 'Board', passwordRequired: true, unlocked: false }]);
    expect((await t.request('POST', `/api/v1/share/${slug}/unlock`, { body: { password: 'a long cli password' } })).status).toBe(200);

    const list = await cli.run(['shared-links', 'list', '-w', website.id, '--json'], as);
    expectExit(list, 0);
    const [link] = parseJson(list);
    expect(link).toMatchObject({ name: 'Board', hasPassword: true });
    expect(list.stdout).not.toContain(slug);

    expectExit(await cli.run(['shared-links', 'update', '-w', website.id, link.id, '--clear-password'], as), 0);
    expect((await t.request('GET', `/api/v1/share/${slug}`)).body.data[0].passwordRequired).toBe(false);

    const unconfirmed = await cli.run(['shared-links', 'revoke', '-w', website.id, link.id], as);
    expect(unconfirmed.code).not.toBe(0);
    expect((await t.request('GET', `/api/v1/share/${slug}`)).status).toBe(200);
    expectExit(await cli.run(['shared-links', 'revoke', '-w', website.id, link.id, '--yes'], as), 0);
    expect((await t.request('GET', `/api/v1/share/${slug}`)).status).toBe(404);
  });

  it('refuses an update with nothing to change before asking the server', async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const nothing = await cli.run(['shared-links', 'update', '-w', website.id, 'ffffffffffffffffffffffff'], { token: owner.token });
    expect(nothing.code).not.toBe(0);
    expect(nothing.stderr).toMatch(/nothing to change/);
  });
});
