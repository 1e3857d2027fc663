import type { Command } from 'commander';
import { normaliseEmail } from '../lib/formats.ts';
import { registerAccountAdminCommands } from './admin/accounts.ts';
import { registerBackupCommand } from './admin/backup.ts';
import { registerDeleteWebsiteCommand } from './admin/delete-website.ts';
import { registerRebuildWebsiteCommand } from './admin/rebuild-website.ts';
import { registerSetPasswordCommand } from './admin/set-password.ts';
import { openMigratedDatabase } from './database-access.ts';
import { fail } from './failure.ts';
import { configOrFail } from './settings.ts';

interface CreateAccountOptions {
  email: string;
  name: string;
  json?: boolean;
}

export function registerAdminCommands(program: Command): void {
  const admin = program
    .command('admin')
    .description('operator commands that use the database directly (DATABASE_URL; no server needed)');

  admin
    .command('create-account')
    .description('create an account and print a new full-access account token')
    .requiredOption('--email <email>', 'the account e-mail address')
    .requiredOption('--name <name>', 'the display name')
    .option('--json', 'print exactly one JSON object: {"account": {...}, "token": "dft_..."}')
    .action(async (options: CreateAccountOptions) => {
      const email = normaliseEmail(options.email);
      if (!email) fail(`"${options.email}" is not a valid e-mail address`, 2);
      const name = options.name.trim();
      if (name.length < 1 || name.length > 100) fail('--name must be 1 to 100 characters', 2);

      const config = configOrFail();
      const { AccountExistsError, createAccountWithToken } = await import('../modules/account/account.service.ts');
      const db = await openMigratedDatabase(config);
      try {
        const result = await createAccountWithToken(db.kysely, email, name);
        if (options.json) {
          process.stdout.write(`${JSON.stringify(result)}\n`);
        } else {
          process.stdout.write(
            `Created account ${result.account.email} (${result.account.id}).\n\n` +
              `Account token (full access; shown only now, store it safely):\n\n  ${result.token}\n\n` +
              `Try it:\n  curl -H "Authorization: Bearer ${result.token}" ${config.publicUrl}/api/v1/admin/account\n`,
          );
        }
      } catch (error) {
        if (error instanceof AccountExistsError) fail(error.message, 1);
        fail(`could not create the account: ${(error as Error).message}`);
      } finally {
        await db.close();
      }
    });

  registerAccountAdminCommands(admin);
  registerSetPasswordCommand(admin);
  registerDeleteWebsiteCommand(admin);
  registerRebuildWebsiteCommand(admin);
  registerBackupCommand(admin);
}
