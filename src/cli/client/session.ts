import type { Command } from 'commander';
import { CliError, type Item, action, call, clientFor, connect, usage } from './api.ts';
import { type JsonOption, emit, printRecord, say, withJson } from './output.ts';
import { promptHidden, readStdin, stdinIsTerminal } from './prompt.ts';
import { DEFAULT_BASE_URL, readStoredSettings, removeStoredToken, settingsPath, writeStoredSettings } from './settings.ts';

// login, logout, whoami and the account itself (GET/PUT /account).

interface LoginOptions extends JsonOption {
  baseUrl?: string;
}

/** The masked form the server shows in lists: prefix, 4, "...", last 4. */
export function maskSecret(secret: string): string {
  const underscore = secret.indexOf('_');
  if (underscore < 0 || secret.length < underscore + 9) return '****';
  return `${secret.slice(0, underscore + 5)}...${secret.slice(-4)}`;
}

function normaliseBaseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    usage(`--base-url: "${value}" is not a URL (e.g. https://sightline.example.com)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') usage(`--base-url: "${value}" must start with http:// or https://`);
  return value.replace(/\/+$/, '');
}

/** The token to log in with: SIGHTLINE_TOKEN, else stdin when it is not a terminal, else a hidden prompt. */
async function readToken(): Promise<{ token: string; source: string }> {
  const fromEnv = process.env.SIGHTLINE_TOKEN?.trim();
  if (fromEnv) return { token: fromEnv, source: 'SIGHTLINE_TOKEN' };
  if (!stdinIsTerminal()) {
    const token = (await readStdin()).trim();
    if (!token) usage('no token on stdin: pipe an account token (dft_...) in, set SIGHTLINE_TOKEN, or run login in a terminal');
    if (/\s/.test(token)) usage('stdin must hold the token alone (one line, no spaces)');
    return { token, source: 'stdin' };
  }
  const token = await promptHidden('Account token (dft_..., input hidden): ');
  if (!token) usage('no token entered; nothing was saved');
  return { token, source: 'the prompt' };
}

export function registerSessionCommands(program: Command): void {
  withJson(
    program
      .command('login')
      .description('check an account token against the server and save it (with the server address) for the other commands')
      .option(
        '--base-url <url>',
        `the server address (default: SIGHTLINE_API_BASE, else the saved address, else ${DEFAULT_BASE_URL})`,
      )
      .addHelpText(
        'after',
        `
The token is never an argument (arguments end up in shell history and process lists). It is read
from SIGHTLINE_TOKEN if set, else from stdin when stdin is not a terminal, else from a hidden prompt.
It is saved to ~/.config/sightline/config.json ($XDG_CONFIG_HOME/sightline/config.json when
set; mode 0600) only after GET /account accepts it.

Examples:
  $ sightline login --base-url https://sightline.example.com
  $ pass show sightline | sightline login
  $ SIGHTLINE_TOKEN=dft_... sightline login`,
      ),
    'the account the token belongs to',
  ).action(
    action(async (options: LoginOptions) => {
      const stored = readStoredSettings();
      const baseUrl = normaliseBaseUrl(options.baseUrl ?? process.env.SIGHTLINE_API_BASE ?? stored.baseUrl ?? DEFAULT_BASE_URL);
      const { token, source } = await readToken();
      const body = await call(clientFor(baseUrl, token).GET('/api/v1/admin/account'), baseUrl).catch((error: unknown) => {
        if (error instanceof CliError) throw new CliError(`${error.message}; nothing was saved`, error.exitCode);
        throw error;
      });
      const account = body.data[0];
      if (!account) throw new CliError('the server answered GET /account without an account; nothing was saved');
      const path = writeStoredSettings({ ...stored, baseUrl, token });
      emit(options, body, () => {});
      const what = account.websiteId ? `a website API key of website ${account.websiteId}, owned by` : '';
      say(`Logged in to ${baseUrl} as ${what ? `${what} ` : ''}${account.name} <${account.email}> (token read from ${source}).`);
      say(`Saved to ${path} (readable by you only).`);
    }),
  );

  program
    .command('logout')
    .description('forget the saved token (the token itself keeps working until you revoke it)')
    .action(
      action(async () => {
        const path = settingsPath();
        if (removeStoredToken()) say(`Logged out: removed the token from ${path}.`);
        else say(`Not logged in: no token saved in ${path}.`);
        if (process.env.SIGHTLINE_TOKEN) say('Note: SIGHTLINE_TOKEN is set in this environment and still applies to every command.');
        say('To revoke the token on the server: sightline tokens list, then sightline tokens revoke <tokenId>.');
      }),
    );

  withJson(program.command('whoami').description('show the account, server and credential the commands use'), 'the account').action(
    action(async (options: JsonOption) => {
      const connection = connect();
      const body = await call(connection.client.GET('/api/v1/admin/account'), connection.settings.baseUrl);
      emit(options, body, () => {
        const account = body.data[0]!;
        const source = process.env.SIGHTLINE_TOKEN ? 'SIGHTLINE_TOKEN' : settingsPath();
        printRecord([
          ['Name', account.name],
          ['Email', account.email],
          ['Account', account.id],
          ['Plan', account.plan.name],
          ...(account.websiteId ? ([['Website key of', account.websiteId]] as Array<[string, unknown]>) : []),
          ['Server', connection.settings.baseUrl],
          ['Credential', `${maskSecret(connection.settings.token)} (from ${source})`],
        ]);
      });
    }),
  );

  const account = program
    .command('account')
    .description('show or rename the account')
    .addHelpText('after', '\nExamples:\n  $ sightline account show\n  $ sightline account update --name "Ada Lovelace"');

  withJson(account.command('show').description('the account profile and plan limits'), 'the account').action(
    action(async (options: JsonOption) => {
      const connection = connect();
      const body = await call(connection.client.GET('/api/v1/admin/account'), connection.settings.baseUrl);
      emit(options, body, () => printAccount(body.data[0]!));
    }),
  );

  withJson(
    account
      .command('update')
      .description("change the account's display name")
      .requiredOption('--name <name>', 'the new display name (1 to 100 characters)'),
    'the updated account',
  ).action(
    action(async (options: JsonOption & { name: string }) => {
      const connection = connect();
      const body = await call(
        connection.client.PUT('/api/v1/admin/account', { body: { name: options.name } }),
        connection.settings.baseUrl,
      );
      emit(options, body, () => printAccount(body.data[0]!));
      say('Account updated.');
    }),
  );
}

type AccountView = Item<'/api/v1/admin/account', 'get'>;

function printAccount(account: AccountView): void {
  printRecord([
    ['Name', account.name],
    ['Email', account.email],
    ['Id', account.id],
    ['Plan', account.plan.name],
    ['Tokens allowed', account.plan.limits.tokensPerAccount],
    ['API keys per website', account.plan.limits.apiKeysPerWebsite],
    ['Alerts per website', account.plan.limits.alertsPerWebsite],
    ['Created', account.createdAt],
  ]);
}
