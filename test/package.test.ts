import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliResult, type EnvValues, Processes, REPO_ROOT, freePort, waitForHealthy } from './helpers/processes.ts';

// Sightline installed the two ways a production host installs it, both without dev dependencies:
// - the package: `npm pack`, then the tarball installed into an empty prefix, then every kind of
//   command run from that installation, far from the checkout (no TypeScript, no tsx, no
//   sources). `npm ci` has just built dist/ (prepare) and the suite's globalSetup rebuilt it, so
//   the pack skips its lifecycle scripts rather than rebuild dist/ under the feet of the other
//   suites that run the command from it;
// - a checkout: `npm ci --omit=dev` in a copy of this working tree builds and serves.

const processes = new Processes();
const scratch = mkdtempSync(join(tmpdir(), 'sightline-package-'));
const prefix = join(scratch, 'prefix');
const sightline = join(prefix, 'bin', 'sightline');
const installed = join(prefix, 'lib', 'node_modules', 'sightline');
const home = join(scratch, 'home');
const databaseUrl = `sqlite:${join(scratch, 'data', 'sightline.db')}`;

/** No npm_* variable of the npm that runs the suite leaks into the npm the test runs. */
function withoutOuterNpm(values: EnvValues): EnvValues {
  const cleared: EnvValues = {};
  for (const name of Object.keys(process.env)) if (/^npm_/i.test(name)) cleared[name] = undefined;
  return { ...cleared, ...values };
}

/**
 * better-sqlite3 installs a prebuilt binary it downloads from GitHub, or compiles SQLite for
 * minutes when it cannot. This machine's build of the same version stands in for that download
 * (prebuild-install's "local prebuild"), so the test measures the package, not a C compiler.
 */
function localPrebuilds(): EnvValues {
  const module = join(REPO_ROOT, 'node_modules', 'better-sqlite3');
  const binary = join(module, 'build', 'Release', 'better_sqlite3.node');
  if (!existsSync(binary)) return {};
  const { version } = JSON.parse(readFileSync(join(module, 'package.json'), 'utf8')) as { version: string };
  const dir = join(scratch, 'prebuilds');
  mkdirSync(dir, { recursive: true });
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  const tar = spawnSync('tar', ['-czf', join(dir, name), '-C', module, 'build/Release/better_sqlite3.node']);
  return tar.status === 0 ? { npm_config_better_sqlite3_local_prebuilds: dir } : {};
}

function expectSuccess(result: CliResult): void {
  expect(result.code, `exit code\n--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`).toBe(0);
}

const appEnv = (values: EnvValues = {}): EnvValues => withoutOuterNpm({ HOME: home, DATABASE_URL: databaseUrl, ...values });
const run = (args: string[], values?: EnvValues) => processes.runCommand(sightline, args, appEnv(values), scratch);

let packedFiles: string[] = [];

async function packAndInstall(): Promise<void> {
  mkdirSync(home, { recursive: true });
  const packed = await processes.runCommand(
    'npm',
    ['pack', '--ignore-scripts', '--json', '--pack-destination', scratch],
    withoutOuterNpm({}),
    REPO_ROOT,
    120_000,
  );
  expectSuccess(packed);
  const [manifest] = JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  packedFiles = manifest!.files.map((file) => file.path);

  const install = await processes.runCommand(
    'npm',
    ['install', '--global', '--prefix', prefix, '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund', join(scratch, manifest!.filename)],
    withoutOuterNpm(localPrebuilds()),
    scratch,
    600_000,
  );
  expectSuccess(install);
}

afterAll(() => {
  processes.killAll();
  rmSync(scratch, { recursive: true, force: true });
});

describe('the npm package', { timeout: 120_000 }, () => {
  beforeAll(packAndInstall, 720_000);

  it('holds the compiled command, the SDK with its types, openapi.json and the README; no sources, tests or benchmarks', () => {
    expect(packedFiles).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'openapi.json',
        'bin/sightline.js',
        'dist/cli/main.js',
        'dist/sdk/index.js',
        'dist/sdk/index.d.ts',
        'dist/web/index.html',
      ]),
    );
    expect(packedFiles.filter((path) => /^dist\/web\/assets\/main-[\w-]+\.js$/.test(path))).toHaveLength(1);
    const unwanted = packedFiles.filter((path) => /^(src|test|bench|scripts|sdk|docs)\//.test(path) || /(?<!\.d)\.ts$/.test(path));
    expect(unwanted).toEqual([]);
  });

  it('installs without dev dependencies and without a TypeScript loader', () => {
    for (const devOnly of ['typescript', 'tsx', 'vitest', 'eslint']) {
      expect(existsSync(join(installed, 'node_modules', devOnly)), devOnly).toBe(false);
    }
    expect(existsSync(sightline)).toBe(true);
  });

  describe('the installed sightline command', () => {
    let token = '';
    let baseUrl = '';

    it('migrate creates the schema', async () => {
      const migrated = await run(['migrate']);
      expectSuccess(migrated);
      expect(migrated.stdout).toMatch(/^applied: 0001-foundation/);
    });

    it('admin create-account --json creates an account and prints its token', async () => {
      const created = await run(['admin', 'create-account', '--email', 'owner@example.com', '--name', 'Owner', '--json']);
      expectSuccess(created);
      token = (JSON.parse(created.stdout) as { token: string }).token;
      expect(token).toMatch(/^dft_/);
    });

    it('serve answers /healthz and an authenticated admin request', async () => {
      const port = await freePort();
      baseUrl = `http://127.0.0.1:${port}`;
      const server = processes.spawnCommand(sightline, ['serve'], appEnv({ HOST: '127.0.0.1', PORT: String(port) }), scratch);
      await waitForHealthy(baseUrl, server, 60_000);
      const account = await fetch(`${baseUrl}/api/v1/admin/account`, { headers: { authorization: `Bearer ${token}` } });
      expect(account.status).toBe(200);
      expect((await account.json()).data[0].email).toBe('owner@example.com');
      // The dashboard, from the package's own build: the page, and the script it names.
      const page = await fetch(`${baseUrl}/sign-in`, { headers: { accept: 'text/html' } });
      expect(page.status).toBe(200);
      const html = await page.text();
      const script = /src="(\/assets\/main-[\w-]+\.js)"/.exec(html)?.[1];
      expect(script, html).toBeDefined();
      expect((await fetch(`${baseUrl}${script}`)).status).toBe(200);
    });

    it('the client commands talk to that server', async () => {
      const client = { SIGHTLINE_API_BASE: baseUrl, SIGHTLINE_TOKEN: token };
      const created = await run(['websites', 'create', '--domain', 'shop.example', '--timezone', 'Europe/Paris', '--name', 'Shop', '--json'], client);
      expectSuccess(created);
      const listed = await run(['websites', 'list', '--json'], client);
      expectSuccess(listed);
      expect(listed.stdout).toContain('shop.example');
    });

    it('exports the typed client as sightline/sdk', async () => {
      // A program beside the installed node_modules/, importing the package by its name.
      const program = join(prefix, 'lib', 'sdk-user.mjs');
      writeFileSync(
        program,
        `import { createSightlineClient } from 'sightline/sdk';
const client = createSightlineClient({ baseUrl: process.env.SIGHTLINE_API_BASE, token: process.env.SIGHTLINE_TOKEN });
const { data, response } = await client.GET('/api/v1/admin/account');
console.log(response.status, data.data[0].email);
`,
      );
      const used = await processes.runCommand(process.execPath, [program], appEnv({ SIGHTLINE_API_BASE: baseUrl, SIGHTLINE_TOKEN: token }), scratch);
      expectSuccess(used);
      expect(used.stdout.trim()).toBe('200 owner@example.com');
    });

    it('mcp answers initialize over stdio and lists its tools from the shipped openapi.json', async () => {
      const transport = new StdioClientTransport({
        command: sightline,
        args: ['mcp'],
        cwd: scratch,
        env: { HOME: home, PATH: process.env.PATH ?? '', SIGHTLINE_API_BASE: baseUrl, SIGHTLINE_TOKEN: token },
        stderr: 'pipe',
      });
      const client = new Client({ name: 'sightline-package-test', version: '1.0.0' });
      try {
        await client.connect(transport);
        expect(client.getServerVersion()?.name).toBeTruthy();
        const { tools } = await client.listTools();
        expect(tools.map((tool) => tool.name)).toContain('account_get');
        const result = (await client.callTool({ name: 'account_get', arguments: {} })) as { content: Array<{ text: string }> };
        expect(result.content[0]!.text).toContain('owner@example.com');
      } finally {
        await client.close();
      }
    });
  });
});

describe('a checkout installed with npm ci --omit=dev', { timeout: 120_000 }, () => {
  const checkout = join(scratch, 'checkout');

  beforeAll(async () => {
    // The files a clone of this working tree has: tracked and new, never ignored (no dist/).
    const listed = spawnSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(listed.status).toBe(0);
    for (const file of listed.stdout.split('\0').filter(Boolean)) {
      if (!existsSync(join(REPO_ROOT, file))) continue; // Deleted in the working tree.
      mkdirSync(dirname(join(checkout, file)), { recursive: true });
      cpSync(join(REPO_ROOT, file), join(checkout, file));
    }
    const install = await processes.runCommand(
      'npm',
      ['ci', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund'],
      withoutOuterNpm(localPrebuilds()),
      checkout,
      600_000,
    );
    expectSuccess(install);
  }, 720_000);

  it('leaves no TypeScript tooling and a built, runnable server', async () => {
    expect(existsSync(join(checkout, 'node_modules', 'typescript'))).toBe(false);
    expect(existsSync(join(checkout, 'node_modules', 'tsx'))).toBe(false);
    expect(existsSync(join(checkout, 'dist', 'cli', 'main.js'))).toBe(true);

    const port = await freePort();
    const env = appEnv({ DATABASE_URL: `sqlite:${join(scratch, 'checkout.db')}`, HOST: '127.0.0.1', PORT: String(port) });
    const server = processes.spawnCommand(process.execPath, ['bin/sightline.js', 'serve'], env, checkout);
    await waitForHealthy(`http://127.0.0.1:${port}`, server, 60_000);
  });
});
