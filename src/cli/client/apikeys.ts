import type { Command } from 'commander';
import { action, call, connect, websiteIdOf } from './api.ts';
import { type JsonOption, done, emit, printSecret, printTable, say, withJson } from './output.ts';
import { type ConfirmOptions, confirm } from './prompt.ts';
import { type WebsiteOption, withWebsite } from './websites.ts';

export function registerApiKeyCommands(program: Command): void {
  const apikeys = program
    .command('apikeys')
    .description('website API keys (df_...): list, create, roll and revoke')
    .addHelpText(
      'after',
      `
A website API key acts on its own website only, with member rights. Its raw value is printed once,
when it is created or rolled.

Examples:
  $ sightline apikeys list -w example.com
  $ sightline apikeys create -w example.com --name "backend"
  $ KEY=$(sightline apikeys create -w example.com --name deploy)   # the raw key alone on stdout
  $ sightline apikeys roll -w example.com 665f1c2e9b1d4a0012345678 --yes
  $ sightline apikeys revoke -w example.com 665f1c2e9b1d4a0012345678 --yes`,
    );

  withJson(withWebsite(apikeys.command('list').description("the website's API keys, masked")), 'the keys').action(
    action(async (options: WebsiteOption & JsonOption) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const body = await call(
        connection.client.GET('/api/v1/admin/websites/{websiteId}/apikeys', { params: { path: { websiteId } } }),
        connection.settings.baseUrl,
      );
      emit(options, body, () =>
        printTable(
          body.data,
          [
            { header: 'id', value: (k) => k.id },
            { header: 'name', value: (k) => k.name },
            { header: 'key', value: (k) => k.displayKey },
            { header: 'last used', value: (k) => k.lastUsedAt ?? 'never' },
            { header: 'created', value: (k) => k.createdAt },
          ],
          'No API keys for this website.',
        ),
      );
    }),
  );

  withJson(
    withWebsite(
      apikeys
        .command('create')
        .description('create an API key for the website and print it once')
        .requiredOption('--name <name>', 'a name to recognise it by (1 to 100 characters)'),
    ),
    'the new key, raw value included',
  ).action(
    action(async (options: WebsiteOption & JsonOption & { name: string }) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const body = await call(
        connection.client.POST('/api/v1/admin/websites/{websiteId}/apikeys', {
          params: { path: { websiteId } },
          body: { name: options.name },
        }),
        connection.settings.baseUrl,
      );
      const key = body.data[0]!;
      say(`Created API key "${key.name}" (${key.id}) for website ${websiteId}.`);
      printSecret(options, body, 'API key', key.key);
    }),
  );

  withJson(
    withWebsite(
      apikeys
        .command('roll')
        .description('replace a key\'s secret (same id and name) and print the new one once; the old secret stops working at once')
        .argument('<apiKeyId>', 'the key id (from "sightline apikeys list")')
        .option('-y, --yes', 'do not ask for confirmation (needed when there is no terminal)'),
    ),
    'the rolled key, new raw value included',
  ).action(
    action(async (apiKeyId: string, options: WebsiteOption & JsonOption & ConfirmOptions) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      await confirm(`roll API key ${apiKeyId}`, 'Its current secret stops working at once.', options);
      const body = await call(
        connection.client.PUT('/api/v1/admin/websites/{websiteId}/apikeys/{apiKeyId}', {
          params: { path: { websiteId, apiKeyId } },
          body: {},
        }),
        connection.settings.baseUrl,
      );
      const key = body.data[0]!;
      say(`Rolled API key "${key.name}" (${key.id}); the old secret no longer works.`);
      printSecret(options, body, 'API key', key.key);
    }),
  );

  withJson(
    withWebsite(
      apikeys
        .command('revoke')
        .description('revoke a key: it stops working at once')
        .argument('<apiKeyId>', 'the key id (from "sightline apikeys list")')
        .option('-y, --yes', 'do not ask for confirmation (needed when there is no terminal)'),
    ),
    'the result',
  ).action(
    action(async (apiKeyId: string, options: WebsiteOption & JsonOption & ConfirmOptions) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      await confirm(`revoke API key ${apiKeyId}`, 'Programs using it are refused from then on.', options);
      const body = await call(
        connection.client.DELETE('/api/v1/admin/websites/{websiteId}/apikeys/{apiKeyId}', {
          params: { path: { websiteId, apiKeyId } },
          body: {},
        }),
        connection.settings.baseUrl,
      );
      done(options, body, `API key ${apiKeyId} revoked.`);
    }),
  );
}
