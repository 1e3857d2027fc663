import type { Command } from 'commander';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { normaliseEmail, normaliseHostname } from '../../lib/formats.ts';
import { printJson } from '../client/output.ts';
import { promptVisible, stdinIsTerminal } from '../client/prompt.ts';
import { openMigratedDatabase } from '../database-access.ts';
import { fail } from '../failure.ts';
import { configOrFail } from '../settings.ts';

// The dashboard's "delete website", from a shell. It cannot be undone, so it is never taken
// silently: on a terminal the operator types the domain; a script repeats it with --confirm.

interface DeleteWebsiteOptions {
  domain: string;
  account?: string;
  confirm?: string;
  json?: boolean;
}

async function countRows(db: Kysely<Database>, table: 'events' | 'payments' | 'api_keys' | 'website_members', websiteId: string) {
  const row = await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('website_id', '=', websiteId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

export function registerDeleteWebsiteCommand(admin: Command): void {
  admin
    .command('delete-website')
    .description('delete a website with everything it owns (events, rollups, goals, funnels, alerts, team, keys, integrations); cannot be undone')
    .requiredOption('--domain <domain>', 'the domain of the website')
    .option('--account <email>', 'the owner, when several accounts have a website with this domain')
    .option('--confirm <domain>', 'the domain again, to delete without a prompt (required when there is no terminal)')
    .option('--json', 'print what was deleted as one JSON object')
    .addHelpText(
      'after',
      `
Examples:
  $ sightline admin delete-website --domain example.com                       # asks you to type the domain
  $ sightline admin delete-website --domain example.com --confirm example.com # scripts`,
    )
    .action(async (options: DeleteWebsiteOptions) => {
      const domain = normaliseHostname(options.domain);
      if (!domain) fail(`"${options.domain}" is not a domain`, 2);
      const ownerEmail = options.account === undefined ? undefined : normaliseEmail(options.account);
      if (ownerEmail === null) fail(`--account: "${options.account}" is not a valid e-mail address`, 2);
      if (options.confirm !== undefined && options.confirm !== domain) {
        fail(`--confirm must repeat the domain exactly ("${domain}"); nothing was deleted`, 2);
      }
      if (options.confirm === undefined && !stdinIsTerminal()) {
        fail(`there is no terminal to confirm on: add --confirm ${domain} to delete it; nothing was deleted`, 2);
      }

      const db = await openMigratedDatabase(configOrFail());
      try {
        const { findWebsitesByDomain } = await import('../../modules/websites/websites.repository.ts');
        const { deleteWebsite } = await import('../../modules/websites/website-deletion.ts');
        const { withClickHouse, countClickHouseEvents, deleteClickHouseEvents } = await import('./website-clickhouse-events.ts');
        const all = await findWebsitesByDomain(db.kysely, domain);
        const matching = ownerEmail ? all.filter((website) => website.ownerEmail === ownerEmail) : all;
        if (matching.length === 0) {
          fail(`no website has the domain ${domain}${ownerEmail ? ` with the owner ${ownerEmail}` : ''}; nothing was deleted`, 1);
        }
        if (matching.length > 1) {
          const owners = matching.map((website) => website.ownerEmail).join(', ');
          fail(`${matching.length} accounts have a website ${domain} (${owners}): add --account <owner e-mail>; nothing was deleted`, 2);
        }
        const website = matching[0]!;

        if (options.confirm === undefined) {
          const [stored, payments, keys, members] = await Promise.all(
            (['events', 'payments', 'api_keys', 'website_members'] as const).map((table) => countRows(db.kysely, table, website.id)),
          );
          const events = stored! + ((await withClickHouse((ch) => countClickHouseEvents(ch, db.kysely, website.id))) ?? 0);
          process.stderr.write(
            `This deletes the website ${domain} (${website.id}, owned by ${website.ownerEmail}) and everything it owns:\n` +
              `${plural(events, 'event')}, ${plural(payments!, 'payment')}, ${plural(keys!, 'API key')}, ` +
              `${plural(members!, 'team member')} (the owner included), and its goals, funnels, alerts, invitations and integrations.\n` +
              'It cannot be undone.\n',
          );
          const typed = (await promptVisible(`Type the domain (${domain}) to delete it: `)).trim();
          if (typed !== domain) fail('the domain did not match; nothing was deleted', 1);
        }

        const deleted = await deleteWebsite(db.kysely, website.id);
        if (!deleted) fail(`the website ${domain} was deleted meanwhile; nothing more to do`, 1);
        const clickhouseEvents = await withClickHouse((ch) => deleteClickHouseEvents(ch, website.id));
        if (options.json) {
          printJson({ ...deleted, ...(clickhouseEvents === null ? {} : { clickhouseEvents }), ownerEmail: website.ownerEmail });
          return;
        }
        const counts = Object.entries(deleted.deletedRows).map(([table, n]) => `${table} ${n}`);
        if (clickhouseEvents !== null) counts.push(`events in ClickHouse ${clickhouseEvents}`);
        const tokens = deleted.deletedTokens + deleted.narrowedTokens;
        process.stdout.write(
          `Deleted the website ${domain} (${website.id}) of ${website.ownerEmail}.\n` +
            `Rows deleted: ${counts.length > 0 ? counts.join(', ') : 'none besides the website'}.\n` +
            (tokens > 0
              ? `Access tokens limited to it: ${deleted.deletedTokens} deleted (it was their only website), ${deleted.narrowedTokens} narrowed.\n`
              : ''),
        );
      } finally {
        await db.close();
      }
    });
}
