import type { Command } from 'commander';
import { PERMISSIONS } from '../../auth/permissions.ts';
import { type RequestBody, action, call, connect, websiteIdOf } from './api.ts';
import { type JsonOption, done, emit, printSecret, printTable, say, withJson } from './output.ts';
import { type ConfirmOptions, confirm } from './prompt.ts';

type CreateBody = RequestBody<'/api/v1/admin/access-tokens', 'post'>;

interface CreateOptions extends JsonOption {
  name?: string;
  permissions?: string;
  websites?: string;
  expiresAt?: string;
}

const splitList = (value: string) =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

export function registerTokenCommands(program: Command): void {
  const tokens = program
    .command('tokens')
    .description('account tokens (dft_...): list, create and revoke')
    .addHelpText(
      'after',
      `
Examples:
  $ sightline tokens list
  $ sightline tokens create --name "read-only reports" --permissions analytics:read,websites:read --websites example.com
  $ TOKEN=$(sightline tokens create --name ci)       # the raw token alone on stdout
  $ sightline tokens revoke 665f1c2e9b1d4a0012345678 --yes`,
    );

  withJson(
    tokens.command('list').description("the account's tokens, masked (the raw value is shown only once, at creation)"),
    'the tokens',
  ).action(
    action(async (options: JsonOption) => {
      const connection = connect();
      const body = await call(connection.client.GET('/api/v1/admin/access-tokens'), connection.settings.baseUrl);
      emit(options, body, () =>
        printTable(
          body.data,
          [
            { header: 'id', value: (t) => t.id },
            { header: 'name', value: (t) => t.name },
            { header: 'token', value: (t) => t.displayKey },
            { header: 'permissions', value: (t) => t.permissions },
            { header: 'websites', value: (t) => (t.websiteIds.length ? t.websiteIds : 'all') },
            { header: 'last used', value: (t) => t.lastUsedAt ?? 'never' },
            { header: 'expires', value: (t) => t.expiresAt ?? 'never' },
          ],
          'No tokens.',
        ),
      );
    }),
  );

  withJson(
    tokens
      .command('create')
      .description('create an account token and print it once; it can never do more than the token that creates it')
      .option('--name <name>', 'a name to recognise it by (1 to 100 characters)')
      .option(
        '--permissions <list>',
        `comma-separated permissions (default: * = all): ${PERMISSIONS.join(', ')}`,
      )
      .option('--websites <list>', 'comma-separated website ids or domains it may use (default: every website, now and later)')
      .option('--expires-at <time>', 'an ISO-8601 time after which it stops working, e.g. 2026-12-31T23:59:59Z'),
    'the new token, raw value included',
  ).action(
    action(async (options: CreateOptions) => {
      const connection = connect();
      const websiteIds = options.websites
        ? await Promise.all(splitList(options.websites).map((website) => websiteIdOf(connection, website)))
        : undefined;
      const request = {
        ...(options.name !== undefined ? { name: options.name } : {}),
        ...(options.permissions !== undefined ? { permissions: splitList(options.permissions) } : {}),
        ...(websiteIds ? { websiteIds } : {}),
        ...(options.expiresAt !== undefined ? { expiresAt: options.expiresAt } : {}),
      } as CreateBody;
      const body = await call(connection.client.POST('/api/v1/admin/access-tokens', { body: request }), connection.settings.baseUrl);
      const token = body.data[0]!;
      say(
        `Created token "${token.name}" (${token.id}) with ${token.permissions.join(', ')} on ${
          token.websiteIds.length ? token.websiteIds.join(', ') : 'every website'
        }.`,
      );
      printSecret(options, body, 'token', token.token);
    }),
  );

  withJson(
    tokens
      .command('revoke')
      .description('revoke a token: it stops working at once (asks first; --yes to skip)')
      .argument('<tokenId>', 'the token id (from "sightline tokens list")')
      .option('-y, --yes', 'do not ask for confirmation (needed when there is no terminal)'),
    'the result',
  ).action(
    action(async (tokenId: string, options: ConfirmOptions & JsonOption) => {
      const connection = connect();
      await confirm(`revoke token ${tokenId}`, 'Programs using it are refused from then on.', options);
      const body = await call(
        connection.client.DELETE('/api/v1/admin/access-tokens/{tokenId}', { params: { path: { tokenId } }, body: {} }),
        connection.settings.baseUrl,
      );
      done(options, body, body.data[0]?.message ?? 'Token revoked.');
    }),
  );
}
