import type { Command } from 'commander';
import { action, call, connect, usage, websiteIdOf } from './api.ts';
import { type JsonOption, done, emit, printSecret, printTable, say, withJson } from './output.ts';
import { type ConfirmOptions, confirm, promptHidden, readStdin, stdinIsTerminal } from './prompt.ts';
import { type WebsiteOption, withWebsite } from './websites.ts';

/** A link's password: asked at a hidden prompt, or read from stdin (never a command-line argument). */
async function readPassword(): Promise<string> {
  const password = stdinIsTerminal() ? await promptHidden('Password for the link: ') : (await readStdin()).replace(/\r?\n$/, '');
  if (!password) usage('the password is empty');
  return password;
}

export function registerSharedLinkCommands(program: Command): void {
  const links = program
    .command('shared-links')
    .description("a website's public, read-only dashboard links: list, create, rename, protect and revoke")
    .addHelpText(
      'after',
      `
A shared link shows the website's analytics page, read-only, to anyone with its URL (and its
password, when it has one). Links open only while the website's public dashboard is on:
"sightline websites update example.com --public-dashboard". The URL is printed once, on creation.

Examples:
  $ sightline shared-links list -w example.com
  $ sightline shared-links create -w example.com --name Investors --yes
  $ echo 'a long password' | sightline shared-links create -w example.com --name Board --password --yes
  $ sightline shared-links update -w example.com 665f1c2e9b1d4a0012345678 --clear-password
  $ sightline shared-links revoke -w example.com 665f1c2e9b1d4a0012345678 --yes`,
    );

  withJson(withWebsite(links.command('list').description("the website's shared links, masked")), 'the links').action(
    action(async (options: WebsiteOption & JsonOption) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const body = await call(
        connection.client.GET('/api/v1/admin/websites/{websiteId}/shared-links', { params: { path: { websiteId } } }),
        connection.settings.baseUrl,
      );
      emit(options, body, () =>
        printTable(
          body.data,
          [
            { header: 'id', value: (l) => l.id },
            { header: 'name', value: (l) => l.name },
            { header: 'link', value: (l) => l.displaySlug },
            { header: 'password', value: (l) => l.hasPassword },
            { header: 'created', value: (l) => l.createdAt },
          ],
          'No shared links for this website.',
        ),
      );
    }),
  );

  withJson(
    withWebsite(
      links
        .command('create')
        .description('create a shared link and print its URL once')
        .requiredOption('--name <name>', 'what the link is for (1 to 100 characters)')
        .option('--password', 'protect it with a password, asked at a hidden prompt or read from stdin')
        .option('-y, --yes', 'do not ask for confirmation (needed when there is no terminal)'),
    ),
    'the new link, its URL included',
  ).action(
    action(async (options: WebsiteOption & JsonOption & ConfirmOptions & { name: string; password?: boolean }) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const password = options.password ? await readPassword() : undefined;
      await confirm(`create shared link "${options.name}"`, 'Anyone with its URL can read the analytics of this website.', options);
      const body = await call(
        connection.client.POST('/api/v1/admin/websites/{websiteId}/shared-links', {
          params: { path: { websiteId } },
          body: { name: options.name, ...(password === undefined ? {} : { password }) },
        }),
        connection.settings.baseUrl,
      );
      const link = body.data[0]!;
      say(`Created shared link "${link.name}" (${link.id}) for website ${websiteId}.`);
      printSecret(options, body, 'shared dashboard URL', link.url);
    }),
  );

  withJson(
    withWebsite(
      links
        .command('update')
        .description('rename a link, or set or clear its password (a new password ends earlier unlocks)')
        .argument('<sharedLinkId>', 'the link id (from "sightline shared-links list")')
        .option('--name <name>', 'a new name')
        .option('--password', 'set a new password, asked at a hidden prompt or read from stdin')
        .option('--clear-password', 'remove the password'),
    ),
    'the link after the change',
  ).action(
    action(async (sharedLinkId: string, options: WebsiteOption & JsonOption & { name?: string; password?: boolean; clearPassword?: boolean }) => {
      if (options.password && options.clearPassword) usage('give --password or --clear-password, not both');
      if (options.name === undefined && !options.password && !options.clearPassword) usage('nothing to change: give --name, --password or --clear-password');
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const password = options.password ? await readPassword() : options.clearPassword ? null : undefined;
      const body = await call(
        connection.client.PUT('/api/v1/admin/websites/{websiteId}/shared-links/{sharedLinkId}', {
          params: { path: { websiteId, sharedLinkId } },
          body: { ...(options.name === undefined ? {} : { name: options.name }), ...(password === undefined ? {} : { password }) },
        }),
        connection.settings.baseUrl,
      );
      done(options, body, `Shared link ${sharedLinkId} updated.`);
    }),
  );

  withJson(
    withWebsite(
      links
        .command('revoke')
        .description('revoke a link: its URL stops working at once')
        .argument('<sharedLinkId>', 'the link id (from "sightline shared-links list")')
        .option('-y, --yes', 'do not ask for confirmation (needed when there is no terminal)'),
    ),
    'the result',
  ).action(
    action(async (sharedLinkId: string, options: WebsiteOption & JsonOption & ConfirmOptions) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      await confirm(`revoke shared link ${sharedLinkId}`, 'Whoever has its URL is refused from then on.', options);
      const body = await call(
        connection.client.DELETE('/api/v1/admin/websites/{websiteId}/shared-links/{sharedLinkId}', {
          params: { path: { websiteId, sharedLinkId } },
          body: {},
        }),
        connection.settings.baseUrl,
      );
      done(options, body, `Shared link ${sharedLinkId} revoked.`);
    }),
  );
}
