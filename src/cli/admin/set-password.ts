import type { Command } from 'commander';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../auth/passwords.ts';
import { normaliseEmail } from '../../lib/formats.ts';
import { promptHidden, readStdin, stdinIsTerminal } from '../client/prompt.ts';
import { openMigratedDatabase } from '../database-access.ts';
import { fail } from '../failure.ts';
import { configOrFail } from '../settings.ts';

// The operator's way to give an account a dashboard password: an account made with
// `admin create-account` has none, and a server without SMTP cannot mail a reset link. Every
// dashboard session of the account ends, as after a reset.

/** SIGHTLINE_PASSWORD, else stdin when it is not a terminal, else a hidden prompt asked twice. */
async function readPassword(): Promise<string> {
  const fromEnv = process.env.SIGHTLINE_PASSWORD;
  if (fromEnv) return fromEnv;
  if (!stdinIsTerminal()) return (await readStdin()).replace(/\r?\n$/, '');
  const first = await promptHidden('New password (input hidden): ');
  const second = await promptHidden('The same again: ');
  if (first !== second) fail('the two passwords differ; nothing was changed', 2);
  return first;
}

export function registerSetPasswordCommand(admin: Command): void {
  admin
    .command('set-password')
    .description("set an account's dashboard password (ends its dashboard sessions)")
    .requiredOption('--email <email>', 'the account e-mail address')
    .addHelpText(
      'after',
      '\nThe password is never an argument: it is read from SIGHTLINE_PASSWORD, else stdin when stdin is\nnot a terminal, else a hidden prompt.',
    )
    .action(async (options: { email: string }) => {
      const email = normaliseEmail(options.email);
      if (!email) fail(`"${options.email}" is not a valid e-mail address`, 2);
      const config = configOrFail();
      const password = await readPassword();
      if (password.length < PASSWORD_MIN_LENGTH || password.length > PASSWORD_MAX_LENGTH) {
        fail(`the password must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters; nothing was changed`, 2);
      }
      const { hashPassword } = await import('../../auth/passwords.ts');
      const hash = await hashPassword(password);
      const db = await openMigratedDatabase(config);
      try {
        const at = new Date().toISOString();
        const changed = await db.kysely.transaction().execute(async (trx) => {
          const account = await trx.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirst();
          if (!account) return false;
          await trx.updateTable('accounts').set({ password_hash: hash, updated_at: at }).where('id', '=', account.id).execute();
          await trx.updateTable('dashboard_sessions').set({ revoked_at: at }).where('account_id', '=', account.id).where('revoked_at', 'is', null).execute();
          return true;
        });
        if (!changed) fail(`no account has the e-mail ${email}`, 1);
        process.stdout.write(`Password set for ${email}. Sign in at ${config.publicUrl}/sign-in\n`);
      } finally {
        await db.close();
      }
    });
}
