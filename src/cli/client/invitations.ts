import type { Command } from 'commander';
import { action, call, connect } from './api.ts';
import { type JsonOption, done, emit, printTable, withJson } from './output.ts';

export function registerInvitationCommands(program: Command): void {
  const invitations = program
    .command('invitations')
    .description('invitations addressed to you: list and accept')
    .addHelpText(
      'after',
      `
Examples:
  $ sightline invitations list
  $ sightline invitations accept 665f1c2e9b1d4a0012345678`,
    );

  withJson(invitations.command('list').description('your pending invitations to join websites'), 'the invitations').action(
    action(async (options: JsonOption) => {
      const connection = connect();
      const body = await call(connection.client.GET('/api/v1/admin/invitations'), connection.settings.baseUrl);
      emit(options, body, () =>
        printTable(
          body.data,
          [
            { header: 'invitation id', value: (i) => i.invitationId },
            { header: 'website', value: (i) => i.domain },
            { header: 'website id', value: (i) => i.websiteId },
            { header: 'role', value: (i) => i.role },
            { header: 'invited', value: (i) => i.invitedAt },
          ],
          'No pending invitations.',
        ),
      );
    }),
  );

  withJson(
    invitations
      .command('accept')
      .description('join the website with the invited role (needs a token of the invited e-mail address)')
      .argument('<invitationId>', 'the invitation id (from "sightline invitations list")'),
    'the result',
  ).action(
    action(async (invitationId: string, options: JsonOption) => {
      const connection = connect();
      const body = await call(
        connection.client.POST('/api/v1/admin/invitations/{invitationId}/accept', { params: { path: { invitationId } }, body: {} }),
        connection.settings.baseUrl,
      );
      const accepted = body.data[0]!;
      done(options, body, `${accepted.message} (website ${accepted.websiteId}, role ${accepted.role}).`);
    }),
  );
}
