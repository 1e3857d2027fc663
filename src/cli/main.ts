import { Command } from 'commander';
import { registerAdminCommands } from './admin.ts';
import { registerClientCommands } from './client/index.ts';
import { endQuietlyOnClosedPipes } from './closed-pipe.ts';
import { fail, messageOf } from './failure.ts';
import { registerServerCommands } from './server-commands.ts';
import { registerMcpCommand } from '../mcp/command.ts';

const program = new Command()
  .name('sightline')
  .description('Sightline: a self-hostable administration API for web analytics.')
  .version('0.1.0')
  .showHelpAfterError('(run "sightline --help" for the list of commands)')
  .addHelpText(
    'after',
    `
Getting started:
  $ npx sightline admin create-account --email you@example.com --name "Your Name"
  $ npx sightline serve
  $ curl -H "Authorization: Bearer dft_..." http://127.0.0.1:3000/api/v1/admin/account

Configuration comes from environment variables (DATABASE_URL, HOST, PORT, ...); see the README.`,
  );

// Usage errors exit 2 (API and runtime errors exit 1). Commander copies this setting to
// subcommands when they are created, so it must come before them.
program.exitOverride((error) => {
  process.exit(error.exitCode === 0 ? 0 : 2);
});

program.hook('preAction', (_program, command) => {
  if (command.name() !== 'serve') endQuietlyOnClosedPipes();
});

registerServerCommands(program);
registerAdminCommands(program);
registerClientCommands(program);
registerMcpCommand(program);
// Whatever a command did not handle still ends in one line on stderr, not a stack trace.
await program.parseAsync(process.argv).catch((error: unknown) => fail(messageOf(error)));
