import { type Command, Option } from 'commander';
import { action, call, connect, usage, websiteIdOf } from './api.ts';
import { type JsonOption, done, emit, printTable, withJson } from './output.ts';
import { type ConfirmOptions, confirm } from './prompt.ts';
import { type WebsiteOption, withWebsite } from './websites.ts';

export function registerTeamCommands(program: Command): void {
  const team = program
    .command('team')
    .description("a website's team: list members and invitations, invite, remove (inviting and removing: owner only)")
    .addHelpText(
      'after',
      `
An invitation is accepted by the invited person with "sightline invitations accept <invitationId>".

Examples:
  $ sightline team list -w example.com
  $ sightline team invite -w example.com --email ada@example.com --role member
  $ sightline team remove -w example.com --email ada@example.com --yes
  $ sightline team list -w example.com --json | jq '.invitations'`,
    );

  withJson(
    withWebsite(team.command('list').description('the members (the owner included) and the pending invitations')),
    '{"data": [members], "invitations": [pending invitations]}',
  ).action(
    action(async (options: WebsiteOption & JsonOption) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const body = await call(
        connection.client.GET('/api/v1/admin/websites/{websiteId}/team', { params: { path: { websiteId } } }),
        connection.settings.baseUrl,
      );
      emit(options, body, () => {
        printTable(
          body.data,
          [
            { header: 'user id', value: (m) => m.userId },
            { header: 'name', value: (m) => m.name },
            { header: 'email', value: (m) => m.email },
            { header: 'role', value: (m) => m.role },
            { header: 'joined', value: (m) => m.joinedAt },
          ],
          'No members.',
        );
        if (body.invitations.length > 0) {
          process.stdout.write('\nPending invitations:\n');
          printTable(
            body.invitations,
            [
              { header: 'invitation id', value: (i) => i.invitationId },
              { header: 'email', value: (i) => i.email },
              { header: 'role', value: (i) => i.role },
              { header: 'invited', value: (i) => i.invitedAt },
            ],
            '',
          );
        }
      });
    }),
  );

  withJson(
    withWebsite(
      team
        .command('invite')
        .description('invite someone by e-mail; they join when they accept (owner only)')
        .requiredOption('--email <email>', 'their e-mail address')
        .addOption(new Option('--role <role>', 'what they may do: viewer reads, member also manages settings').choices(['viewer', 'member']).default('viewer')),
    ),
    'the invitation',
  ).action(
    action(async (options: WebsiteOption & JsonOption & { email: string; role: 'viewer' | 'member' }) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const body = await call(
        connection.client.POST('/api/v1/admin/websites/{websiteId}/team', {
          params: { path: { websiteId } },
          body: { email: options.email, role: options.role },
        }),
        connection.settings.baseUrl,
      );
      const invited = body.data[0]!;
      done(
        options,
        body,
        `${invited.message} (invitation ${invited.invitationId}, role ${invited.role}).\n` +
          `From a terminal, they accept with "sightline invitations accept ${invited.invitationId}".`,
      );
    }),
  );

  withJson(
    withWebsite(
      team
        .command('remove')
        .description('remove a member, or withdraw a pending invitation (owner only)')
        .option('--email <email>', 'the member or invitation e-mail address')
        .option('--user-id <userId>', 'the member user id (from "sightline team list")')
        .option('-y, --yes', 'do not ask for confirmation (needed when there is no terminal)'),
    ),
    'the result',
  ).action(
    action(async (options: WebsiteOption & JsonOption & ConfirmOptions & { email?: string; userId?: string }) => {
      if ((options.email === undefined) === (options.userId === undefined)) usage('give either --email or --user-id');
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const who = options.email ?? options.userId!;
      await confirm(`remove ${who} from the team of ${options.website}`, 'They lose access to the website.', options);
      const body = await call(
        connection.client.DELETE('/api/v1/admin/websites/{websiteId}/team', {
          params: { path: { websiteId } },
          body: options.email !== undefined ? { email: options.email } : { userId: options.userId! },
        }),
        connection.settings.baseUrl,
      );
      done(options, body, body.data[0]?.message ?? 'Removed.');
    }),
  );

}
