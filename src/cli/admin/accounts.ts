import type { Command } from 'commander';
import type { Kysely } from 'kysely';
import { ALL } from '../../auth/permissions.ts';
import type { Database } from '../../db/schema.ts';
import { normaliseEmail } from '../../lib/formats.ts';
import { printJson, printTable, say } from '../client/output.ts';
import { openMigratedDatabase } from '../database-access.ts';
import { fail } from '../failure.ts';
import { configOrFail } from '../settings.ts';

// The operator's view of the accounts, and the way back in for someone who lost every token.

export interface AccountOverview {
  id: string;
  email: string;
  name: string;
  createdAt: string;
  websitesOwned: number;
  activeTokens: number;
}

async function listAccounts(db: Kysely<Database>): Promise<AccountOverview[]> {
  const now = new Date().toISOString();
  const rows = await db
    .selectFrom('accounts')
    .select(['accounts.id', 'accounts.email', 'accounts.name', 'accounts.created_at'])
    .select((eb) => [
      eb
        .selectFrom('website_members')
        .select(eb.fn.countAll<number>().as('n'))
        .whereRef('website_members.account_id', '=', 'accounts.id')
        .where('website_members.role', '=', 'owner')
        .as('websites'),
      eb
        .selectFrom('access_tokens')
        .select(eb.fn.countAll<number>().as('n'))
        .whereRef('access_tokens.account_id', '=', 'accounts.id')
        .where('access_tokens.revoked_at', 'is', null)
        .where((w) => w.or([w('access_tokens.expires_at', 'is', null), w('access_tokens.expires_at', '>', now)]))
        .as('tokens'),
    ])
    .orderBy('accounts.created_at')
    .orderBy('accounts.id')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    email: row.email,
    name: row.name,
    createdAt: row.created_at,
    websitesOwned: Number(row.websites),
    activeTokens: Number(row.tokens),
  }));
}

const RECOVERY_TOKEN_NAME = 'Recovery token (issued by sightline admin issue-token)';

export function registerAccountAdminCommands(admin: Command): void {
  admin
    .command('list-accounts')
    .description('list every account: id, e-mail, name, created, websites owned, active tokens')
    .option('--json', 'print one JSON array (times in full ISO-8601)')
    .action(async (options: { json?: boolean }) => {
      const db = await openMigratedDatabase(configOrFail());
      try {
        const accounts = await listAccounts(db.kysely);
        if (options.json) {
          printJson(accounts);
          return;
        }
        printTable(
          accounts,
          [
            { header: 'id', value: (a) => a.id },
            { header: 'email', value: (a) => a.email },
            { header: 'name', value: (a) => a.name },
            { header: 'created', value: (a) => a.createdAt },
            { header: 'websites', value: (a) => String(a.websitesOwned) },
            { header: 'tokens', value: (a) => String(a.activeTokens) },
          ],
          'No accounts yet. Create one with: sightline admin create-account --email you@example.com --name "Your Name"',
        );
      } finally {
        await db.close();
      }
    });

  admin
    .command('issue-token')
    .description("issue a new full-access token for an account (the way back in after a lost token); the account's other tokens stay as they are")
    .requiredOption('--email <email>', 'the e-mail address of the account')
    .option('--name <name>', 'a name for the token, shown in "sightline tokens list"', RECOVERY_TOKEN_NAME)
    .option('--json', 'print exactly one JSON object: {"account": {...}, "token": "dft_..."}')
    .addHelpText('after', '\nThe token is shown once. Revoke the lost ones afterwards with "sightline tokens list" and "sightline tokens revoke".')
    .action(async (options: { email: string; name: string; json?: boolean }) => {
      const email = normaliseEmail(options.email);
      if (!email) fail(`"${options.email}" is not a valid e-mail address`, 2);
      const name = options.name.trim();
      if (name.length < 1 || name.length > 100) fail('--name must be 1 to 100 characters', 2);

      const config = configOrFail();
      const db = await openMigratedDatabase(config);
      try {
        const { findAccountByEmail } = await import('../../modules/account/account.repository.ts');
        const { issueToken } = await import('../../modules/access-tokens/access-tokens.service.ts');
        const account = await findAccountByEmail(db.kysely, email);
        if (!account) fail(`no account has the e-mail ${email} (see "sightline admin list-accounts")`, 1);
        // The recovery path ignores the per-account token limit: someone locked out cannot revoke one first.
        const { raw } = await issueToken(db.kysely, { accountId: account.id, name, permissions: [ALL], websiteIds: [], expiresAt: null });
        const result = { account: { id: account.id, email: account.email, name: account.name }, token: raw };
        if (options.json) {
          process.stdout.write(`${JSON.stringify(result)}\n`);
        } else {
          process.stdout.write(
            `Issued a new full-access token for ${account.email} (${account.id}).\n\n` +
              `Account token (shown only now, store it safely):\n\n  ${raw}\n\n` +
              `Try it:\n  curl -H "Authorization: Bearer ${raw}" ${config.publicUrl}/api/v1/admin/account\n`,
          );
        }
        say('Lost tokens still work until they are revoked: "sightline tokens list", then "sightline tokens revoke <id>".');
      } finally {
        await db.close();
      }
    });
}
