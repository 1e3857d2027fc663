import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { layoutTable, tableStyle } from '../src/cli/client/table.ts';
import { newId } from '../src/lib/ids.ts';
import { insertWebsite } from '../src/modules/websites/websites.repository.ts';
import { HAS_SCRIPT, expectExit, parseJson, useCliHarness } from './helpers/cli-client.ts';
import { POSTGRES_URL } from './helpers/engines.ts';
import { Processes } from './helpers/processes.ts';
import { addMember, createAccount, createApiKey, createToken, createWebsite } from './helpers/factories.ts';

// What the CLI prints when a person reads it: tables that fit the terminal, a pipe that closes
// early, and settings or database problems in one line.

const MINUTE = /\d{4}-\d{2}-\d{2} \d{2}:\d{2}/;
const width = (line: string) => Array.from(line).length;

describe('tables', () => {
  it('fit the width, cutting the widest cells with … and identifiers last', () => {
    const id = 'a'.repeat(24);
    const lines = layoutTable(['ID', 'NAME', 'DESCRIPTION'], [[id, 'short', 'x'.repeat(100)], [id, 'n'.repeat(40), 'y']], 60);
    for (const line of lines) expect(width(line)).toBeLessThanOrEqual(60);
    expect(lines[1]).toMatch(new RegExp(`^${id}  short +x+…$`));
    expect(lines[2]).toMatch(new RegExp(`^${id}  n+…  y$`));
    // Nothing is cut when everything fits.
    expect(layoutTable(['A', 'B'], [['one', 'two']], 80)).toEqual(['A    B', 'one  two']);
  });

  it('still fit a terminal too narrow for every column', () => {
    const lines = layoutTable(['ID', 'A', 'B', 'C', 'D'], [['f'.repeat(24), 'aaaaaaaaaa', 'bbbbbbbbbb', 'cccccccccc', 'dddddddddd']], 30);
    for (const line of lines) expect(width(line)).toBeLessThanOrEqual(30);
  });
});

describe('table style', () => {
  it('is tab-separated values into a pipe or a file, whatever COLUMNS says, and fitted on a terminal', () => {
    expect(tableStyle({}, { isTTY: false })).toEqual({ kind: 'tsv' });
    expect(tableStyle({ COLUMNS: '80' }, { isTTY: undefined })).toEqual({ kind: 'tsv' });
    expect(tableStyle({ COLUMNS: '80' }, { isTTY: true, columns: 132 })).toEqual({ kind: 'terminal', width: 132 });
    expect(tableStyle({ COLUMNS: '100' }, { isTTY: true, columns: 0 })).toEqual({ kind: 'terminal', width: 100 });
    expect(tableStyle({}, { isTTY: true })).toEqual({ kind: 'terminal', width: 80 });
  });

  it('is a terminal table when SIGHTLINE_FORCE_TTY asks for one, a number there being the width', () => {
    expect(tableStyle({ SIGHTLINE_FORCE_TTY: '120' }, { isTTY: false })).toEqual({ kind: 'terminal', width: 120 });
    expect(tableStyle({ SIGHTLINE_FORCE_TTY: '1', COLUMNS: '90' }, { isTTY: false })).toEqual({ kind: 'terminal', width: 1 });
    expect(tableStyle({ SIGHTLINE_FORCE_TTY: 'yes', COLUMNS: '90' }, { isTTY: false })).toEqual({ kind: 'terminal', width: 90 });
    expect(tableStyle({ SIGHTLINE_FORCE_TTY: 'yes' }, { isTTY: false })).toEqual({ kind: 'terminal', width: 80 });
  });
});

describe('sightline tables into a pipe', { timeout: 120_000 }, () => {
  const cli = useCliHarness();
  const { t } = cli;

  async function longWebsite() {
    const owner = await createAccount(t);
    const domain = `cli-site-with-a-long-name-${randomBytes(6).toString('hex')}.subdomain.example.com`;
    const website = await createWebsite(t, owner.token, domain);
    const name = 'A website whose name goes on and on and on well past what fits';
    const renamed = await t.request('PUT', `/api/v1/admin/websites/${website.id}`, { token: owner.token, body: { name } });
    expect(renamed.status, renamed.raw).toBe(200);
    return { owner, website, name };
  }

  it('prints whole values, tab-separated, without a header, so `| grep example.com` finds the website', async () => {
    const { owner, website, name } = await longWebsite();
    // COLUMNS exported by a shell must not cut what goes into a pipe.
    const listed = await cli.run(['websites', 'list'], { token: owner.token, env: { COLUMNS: '80' } });
    expectExit(listed, 0);
    const lines = listed.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    const fields = lines[0]!.split('\t');
    expect(fields[0]).toBe(website.id);
    expect(fields).toContain(website.domain);
    expect(fields).toContain(name);
    expect(listed.stdout).not.toContain('…');
    expect(listed.stdout).not.toMatch(/^ID/m);
    // Times whole, as --json has them.
    const tokens = await cli.run(['tokens', 'list'], { token: owner.token });
    expectExit(tokens, 0);
    expect(tokens.stdout).toMatch(/\t\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z(\t|$)/m);

    const scratch = mkdtempSync(join(tmpdir(), 'sightline-grep-'));
    const processes = new Processes();
    try {
      const grep = await processes.runShell(`"${process.execPath}" bin/sightline.js websites list | grep -F "${website.domain}"`, {
        SIGHTLINE_API_BASE: cli.baseUrl(),
        SIGHTLINE_TOKEN: owner.token,
        HOME: scratch,
        COLUMNS: '80',
      });
      expectExit(grep, 0);
      expect(grep.stdout.split('\t')).toContain(website.domain);
    } finally {
      processes.killAll();
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  it.skipIf(!HAS_SCRIPT)('still fits the table to a terminal, with its header', async () => {
    const { owner, website } = await longWebsite();
    const shown = await cli.runInTerminal(['websites', 'list'], [], { token: owner.token, env: { COLUMNS: '80', TZ: 'UTC' } });
    expectExit(shown, 0);
    const lines = shown.stdout.replace(/\r/g, '').trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID +/);
    expect(shown.stdout).not.toContain('\t');
    expect(shown.stdout).toContain('…');
    expect(lines[1]).toMatch(new RegExp(`^${website.id} `));
    for (const line of lines) expect(width(line), line).toBeLessThanOrEqual(80);
  });
});

describe('sightline output at 80 columns', { timeout: 120_000 }, () => {
  const cli = useCliHarness();
  const { t } = cli;
  const narrow = { SIGHTLINE_FORCE_TTY: '80', TZ: 'UTC' };

  it('no line of a table is wider than 80 on an 80-column terminal; times are shortened and --json keeps them whole', async () => {
    const owner = await createAccount(t, 'A Person With A Rather Long Display Name Indeed');
    const website = await createWebsite(t, owner.token, `a-very-long-subdomain-name-${randomBytes(6).toString('hex')}.analytics.example.com`);
    await t.request('PUT', `/api/v1/admin/websites/${website.id}`, {
      token: owner.token,
      body: { name: 'A website whose name goes on and on and on well past what fits' },
    });
    await createApiKey(t, owner.token, website.id, 'a key with a long descriptive name for the backend');
    await createToken(t, owner, ['websites:read', 'analytics:read'], [website.id]);
    const member = await createAccount(t, 'Member With Another Long Name');
    await addMember(t, website.id, member.id, 'member');

    const commands = [
      ['websites', 'list'],
      ['tokens', 'list'],
      ['apikeys', 'list', '-w', website.id],
      ['team', 'list', '-w', website.id],
    ];
    for (const args of commands) {
      const result = await cli.run(args, { token: owner.token, env: narrow });
      expectExit(result, 0);
      const lines = result.stdout.trimEnd().split('\n');
      expect(lines.length, args.join(' ')).toBeGreaterThan(1);
      for (const line of lines) expect(width(line), `${args.join(' ')}: ${line}`).toBeLessThanOrEqual(80);
    }

    const websites = await cli.run(['websites', 'list'], { token: owner.token, env: narrow });
    expect(websites.stdout).toContain('…');
    // The id, what people copy from a table, is kept whole.
    expect(websites.stdout).toMatch(new RegExp(`^${website.id} `, 'm'));

    // Times are cut after the other columns: the team list keeps "joined" whole at 80 columns.
    const team = await cli.run(['team', 'list', '-w', website.id], { token: owner.token, env: narrow });
    expect(team.stdout).toMatch(new RegExp(`^${owner.id} .* owner +${MINUTE.source}$`, 'm'));
    expect(team.stdout).not.toMatch(/\d{2}:\d{2}:\d{2}/);
    const json = await cli.run(['tokens', 'list', '--json'], { token: owner.token, env: narrow });
    expect(parseJson(json)[0].createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it('a closed pipe ends the command quietly with exit 0: websites list | head -1', async () => {
    const owner = await createAccount(t);
    // More output than a pipe buffers (64 KiB), so the command is still writing when head exits.
    const now = new Date().toISOString();
    for (let i = 0; i < 1200; i++) {
      const id = newId();
      await insertWebsite(
        t.db,
        {
          id,
          domain: `site-${i}.pipe.example.com`,
          name: `Website number ${i}`,
          tracking_id: `dfid_${id}`,
          timezone: 'UTC',
          currency: 'USD',
          kpi: null,
          kpi_color_scheme: null,
          revenue_metric: 'revenue',
          is_cookieless: false,
          include_renewal_revenue: true,
          allowed_hostnames: '[]',
          excluded_ips: '[]',
          excluded_paths: '[]',
          excluded_countries: '[]',
          excluded_hostnames: '[]',
          created_at: now,
          updated_at: now,
        },
        owner.id,
      );
    }
    const scratch = mkdtempSync(join(tmpdir(), 'sightline-pipe-'));
    const processes = new Processes();
    try {
      for (const args of ['websites list', 'websites list --json']) {
        const err = join(scratch, 'stderr');
        const code = join(scratch, 'code');
        const result = await processes.runShell(
          `{ "${process.execPath}" bin/sightline.js ${args} 2>"${err}"; echo $? >"${code}"; } | head -1`,
          { SIGHTLINE_API_BASE: cli.baseUrl(), SIGHTLINE_TOKEN: owner.token, HOME: scratch },
        );
        expectExit(result, 0);
        expect(result.stdout.split('\n').filter(Boolean)).toHaveLength(1);
        expect(readFileSync(err, 'utf8'), args).toBe('');
        expect(readFileSync(code, 'utf8').trim(), args).toBe('0');
      }
    } finally {
      processes.killAll();
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});

describe('settings and the database, in one line', { timeout: 120_000 }, () => {
  const cli = useCliHarness();
  const dir = mkdtempSync(join(tmpdir(), 'sightline-settings-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const expectOneLine = (stderr: string) => {
    expect(stderr.split('\n').filter(Boolean), stderr).toHaveLength(1);
    expect(stderr).toMatch(/^sightline: /);
    expect(stderr).not.toMatch(/^\s+at /m);
  };

  const unreachable = new URL(POSTGRES_URL);
  unreachable.port = '1';
  unreachable.password = 'pw-not-to-be-shown';
  const missingDatabase = new URL(POSTGRES_URL);
  missingDatabase.pathname = `/sl_missing_${randomBytes(4).toString('hex')}`;

  it.each([
    ['an unknown scheme', 'mysql://root@127.0.0.1/sightline', /DATABASE_URL must start with sqlite: or postgres:\/\//],
    ['a PostgreSQL server that does not answer', unreachable.toString(), /cannot use the database at postgres:\/\/.*:1\/.*ECONNREFUSED|connect/],
    ['a PostgreSQL database that does not exist', missingDatabase.toString(), /does not exist/],
    ['a SQLite path that cannot be created', 'sqlite:/etc/hostname/x.db', /cannot use the database at sqlite:\/etc\/hostname\/x\.db: /],
  ])('migrate with %s says so in one line and exits 1', async (_label, url, message) => {
    const result = await cli.run(['migrate'], { env: { DATABASE_URL: url, SIGHTLINE_SECRET_KEY: randomBytes(32).toString('base64') } });
    expectExit(result, 1);
    expectOneLine(result.stderr);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toContain('pw-not-to-be-shown');
    expect(result.stdout).toBe('');
  });

  it.each([
    ['migrate', 'PORT', 'not-a-port'],
    ['migrate', 'PORT', '70000'],
    ['migrate', 'SIGHTLINE_SECRET_KEY', 'too-short'],
    ['serve', 'PORT', '70000'],
    ['serve', 'SIGHTLINE_SECRET_KEY', 'too-short'],
    ['serve', 'SIGHTLINE_PREVIOUS_SECRET_KEYS', 'not-base64!'],
  ])('%s with a bad %s exits 1 in one line without creating the database', async (command, name, value) => {
    const file = join(dir, `${command}-${name}-${randomBytes(3).toString('hex')}`, 'sightline.db');
    const result = await cli.run([command], { env: { DATABASE_URL: `sqlite:${file}`, HOST: '127.0.0.1', PORT: '0', [name]: value } });
    expectExit(result, 1);
    expectOneLine(result.stderr);
    expect(result.stderr).toContain(name);
    expect(existsSync(file), 'the database file').toBe(false);
  });

  // Not a closed pipe but a failing one (a full disk): one line and exit 1, not a stack trace.
  it.skipIf(!existsSync('/dev/full'))('an output that cannot be written (ENOSPC) says so in one line and exits 1', async () => {
    const url = `sqlite:${join(dir, `full-${randomBytes(3).toString('hex')}`, 'sightline.db')}`;
    expectExit(await cli.run(['admin', 'create-account', '--email', 'full@example.com', '--name', 'Full'], { env: { DATABASE_URL: url } }), 0);
    const processes = new Processes();
    try {
      const result = await processes.runShell(`"${process.execPath}" bin/sightline.js admin list-accounts >/dev/full`, { DATABASE_URL: url });
      expectExit(result, 1);
      expectOneLine(result.stderr);
      expect(result.stderr).toMatch(/ENOSPC|no space/);
    } finally {
      processes.killAll();
    }
  });
});
