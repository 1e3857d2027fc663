import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HAS_SCRIPT, expectExit, parseJson, useCliHarness } from './helpers/cli-client.ts';
import { createAccount, createApiKey, createWebsite } from './helpers/factories.ts';
import { freePort } from './helpers/processes.ts';

// login, logout, whoami and account, as processes against a listening server, with a temp HOME.

const configFile = (home: string) => join(home, '.config', 'sightline', 'config.json');
const mode = (path: string) => statSync(path).mode & 0o777;

describe('sightline login, whoami, logout and account', { timeout: 90_000 }, () => {
  const cli = useCliHarness();
  const { t } = cli;

  it('login reads the token from stdin, checks it, saves it with mode 0600 and never prints it; whoami and logout use the file', async () => {
    const account = await createAccount(t, 'Stdin Sam');
    const home = cli.newHome();

    const login = await cli.run(['login'], { home, input: `${account.token}\n` });
    expectExit(login, 0);
    expect(login.stdout).toBe('');
    expect(login.stderr).toContain(`Logged in to ${cli.baseUrl()} as Stdin Sam <${account.email}> (token read from stdin)`);
    expect(login.stdout + login.stderr).not.toContain(account.token);
    const path = configFile(home);
    expect(mode(path)).toBe(0o600);
    expect(mode(dirname(path))).toBe(0o700);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ baseUrl: cli.baseUrl(), token: account.token });

    // No SIGHTLINE_TOKEN and no SIGHTLINE_API_BASE: the saved file alone says where and who.
    const whoami = await cli.run(['whoami'], { home, env: { SIGHTLINE_API_BASE: undefined } });
    expectExit(whoami, 0);
    expect(whoami.stdout).toMatch(/^Name: +Stdin Sam$/m);
    expect(whoami.stdout).toMatch(new RegExp(`^Email: +${account.email}$`, 'm'));
    expect(whoami.stdout).toMatch(new RegExp(`^Server: +${cli.baseUrl()}$`, 'm'));
    expect(whoami.stdout).toMatch(new RegExp(`^Credential: +${account.token.slice(0, 8)}\\.\\.\\.${account.token.slice(-4)} \\(from ${path}\\)$`, 'm'));
    expect(whoami.stdout).not.toContain(account.token);

    const logout = await cli.run(['logout'], { home });
    expectExit(logout, 0);
    expect(logout.stderr).toContain(`Logged out: removed the token from ${path}`);
    // The base URL stays; only the credential goes.
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ baseUrl: cli.baseUrl() });

    const after = await cli.run(['whoami'], { home });
    expectExit(after, 2);
    expect(after.stdout).toBe('');
    expect(after.stderr).toBe('sightline: not logged in: run "sightline login" first, or set SIGHTLINE_TOKEN\n');
  });

  it('login takes SIGHTLINE_TOKEN and --base-url, and with --json prints the account', async () => {
    const account = await createAccount(t, 'Env Eve');
    const home = cli.newHome();
    const login = await cli.run(['login', '--base-url', `${cli.baseUrl()}/`, '--json'], {
      home,
      token: account.token,
      env: { SIGHTLINE_API_BASE: 'http://127.0.0.1:1' },
    });
    expectExit(login, 0);
    const data = parseJson(login);
    expect(data).toEqual([expect.objectContaining({ id: account.id, email: account.email, name: 'Env Eve' })]);
    expect(login.stderr).toContain('token read from SIGHTLINE_TOKEN');
    expect(JSON.parse(readFileSync(configFile(home), 'utf8'))).toEqual({ baseUrl: cli.baseUrl(), token: account.token });
  });

  it('login with a token the server refuses exits 1 with its message and saves nothing', async () => {
    const home = cli.newHome();
    const bogus = 'dft_000000000000000000000000000000000000';
    const login = await cli.run(['login'], { home, input: bogus });
    expectExit(login, 1);
    expect(login.stderr).toMatch(/^sightline: .+ \(HTTP 401\) .*; nothing was saved\n$/);
    expect(login.stdout + login.stderr).not.toContain(bogus);
    expect(existsSync(configFile(home))).toBe(false);
  });

  it('login refuses the token as an argument (exit 2), does not echo it, and saves nothing', async () => {
    const account = await createAccount(t);
    const home = cli.newHome();
    const login = await cli.run(['login', account.token], { home });
    expectExit(login, 2);
    expect(login.stderr).toMatch(/too many arguments/);
    expect(login.stdout + login.stderr).not.toContain(account.token);
    expect(existsSync(configFile(home))).toBe(false);
  });

  it('login with nothing on stdin is a usage error (exit 2)', async () => {
    const home = cli.newHome();
    const login = await cli.run(['login'], { home, input: '' });
    expectExit(login, 2);
    expect(login.stderr).toMatch(/^sightline: no token on stdin/);
    expect(existsSync(configFile(home))).toBe(false);
  });

  it.skipIf(!HAS_SCRIPT)('login on a terminal asks with a hidden prompt and never echoes the token', async () => {
    const account = await createAccount(t, 'Terminal Tia');
    const home = cli.newHome();
    const login = await cli.runInTerminal(['login'], [{ waitFor: /Account token \(dft_\.\.\., input hidden\): /, type: account.token }], {
      home,
    });
    expectExit(login, 0);
    expect(login.stdout).toContain('as Terminal Tia');
    expect(login.stdout).toContain('token read from the prompt');
    expect(login.stdout).not.toContain(account.token);
    expect(login.stdout).not.toContain(account.token.slice(4, 20));
    expect(JSON.parse(readFileSync(configFile(home), 'utf8')).token).toBe(account.token);
  });

  it('SIGHTLINE_TOKEN and SIGHTLINE_API_BASE override the saved settings', async () => {
    const saved = await createAccount(t, 'Saved Sue');
    const fromEnv = await createAccount(t, 'Env Ed');
    const home = cli.newHome();
    mkdirSync(dirname(configFile(home)), { recursive: true });
    writeFileSync(configFile(home), JSON.stringify({ baseUrl: 'http://127.0.0.1:1', token: saved.token }), { mode: 0o600 });

    const whoami = await cli.run(['whoami', '--json'], { home, token: fromEnv.token });
    expectExit(whoami, 0);
    expect(parseJson(whoami)).toEqual([expect.objectContaining({ id: fromEnv.id, name: 'Env Ed' })]);
  });

  it('whoami with a website API key names the website; the key may name its own website by domain', async () => {
    const owner = await createAccount(t, 'Key Owner');
    const website = await createWebsite(t, owner.token);
    const key = await createApiKey(t, owner.token, website.id);
    const whoami = await cli.run(['whoami'], { token: key.key });
    expectExit(whoami, 0);
    expect(whoami.stdout).toMatch(new RegExp(`^Website key of: +${website.id}$`, 'm'));
    expect(whoami.stdout).toMatch(/^Credential: +df_\w{4}\.\.\.\w{4} \(from SIGHTLINE_TOKEN\)$/m);
    expect(whoami.stdout).not.toContain(key.key);

    // A key may name its own website by domain (it cannot list websites), and no other.
    const own = await cli.run(['funnels', 'list', '-w', website.domain], { token: key.key });
    expectExit(own, 0);
    expect(own.stderr).toBe('No active funnels.\n');
    const other = await cli.run(['funnels', 'list', '-w', 'other.example.com'], { token: key.key });
    expectExit(other, 1);
    expect(other.stderr).toBe(`sightline: this website API key belongs to website ${website.id}, not to "other.example.com"\n`);
  });

  it('account show prints the profile and plan; account update --json renames it', async () => {
    const account = await createAccount(t, 'Old Name');
    const show = await cli.run(['account', 'show'], { token: account.token });
    expectExit(show, 0);
    expect(show.stdout).toMatch(/^Name: +Old Name$/m);
    expect(show.stdout).toMatch(/^Tokens allowed: +\d+$/m);

    const update = await cli.run(['account', 'update', '--name', 'New Name', '--json'], { token: account.token });
    expectExit(update, 0);
    expect(parseJson(update)).toEqual([expect.objectContaining({ id: account.id, name: 'New Name' })]);
    const row = await t.db.selectFrom('accounts').select('name').where('id', '=', account.id).executeTakeFirstOrThrow();
    expect(row.name).toBe('New Name');
  });

  it('an API error exits 1 with the server message on stderr and nothing on stdout', async () => {
    const account = await createAccount(t, 'Kept Name');
    const update = await cli.run(['account', 'update', '--name', 'x'.repeat(101), '--json'], { token: account.token });
    expectExit(update, 1);
    expect(update.stdout).toBe('');
    expect(update.stderr).toBe('sightline: body.name: must NOT have more than 100 characters (HTTP 400)\n');
    const row = await t.db.selectFrom('accounts').select('name').where('id', '=', account.id).executeTakeFirstOrThrow();
    expect(row.name).toBe('Kept Name');
  });

  it('a revoked token exits 1 with the 401 message and a hint to log in again', async () => {
    const whoami = await cli.run(['whoami'], { token: 'dft_000000000000000000000000000000000000' });
    expectExit(whoami, 1);
    expect(whoami.stderr).toMatch(/\(HTTP 401\) \(run "sightline login" again, or check SIGHTLINE_TOKEN\)\n$/);
  });

  it('a server that does not answer exits 1 and names the address', async () => {
    const account = await createAccount(t);
    const closed = `http://127.0.0.1:${await freePort()}`;
    const whoami = await cli.run(['whoami'], { token: account.token, env: { SIGHTLINE_API_BASE: closed } });
    expectExit(whoami, 1);
    expect(whoami.stdout).toBe('');
    expect(whoami.stderr).toContain(`sightline: could not reach ${closed}: ECONNREFUSED (is the server running?`);
  });

  it('an unknown option is a usage error (exit 2)', async () => {
    const result = await cli.run(['whoami', '--bogus'], { token: 'dft_unused' });
    expectExit(result, 2);
    expect(result.stderr).toMatch(/unknown option '--bogus'/);
  });
});
