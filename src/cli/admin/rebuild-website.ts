import type { Command } from 'commander';
import { normaliseEmail, normaliseHostname } from '../../lib/formats.ts';
import { printJson } from '../client/output.ts';
import { openMigratedDatabase } from '../database-access.ts';
import { fail } from '../failure.ts';
import { configOrFail } from '../settings.ts';

// A repair, from a shell: every derived table of a website built again from its raw events. It
// only records the build; the running server (any instance) does it in the background within
// seconds, and GET /websites/{id}/derived-data and /metrics show how far it is.

export const OPERATOR_REBUILD = 'rebuild requested by an operator';

interface RebuildWebsiteOptions {
  domain: string;
  account?: string;
  json?: boolean;
}

export function registerRebuildWebsiteCommand(admin: Command): void {
  admin
    .command('rebuild-website')
    .description("build a website's statistics (every derived table) again from its raw events, in the background of the running server")
    .requiredOption('--domain <domain>', 'the domain of the website')
    .option('--account <email>', 'the owner, when several accounts have a website with this domain')
    .option('--json', 'print the build as one JSON object')
    .action(async (options: RebuildWebsiteOptions) => {
      const domain = normaliseHostname(options.domain);
      if (!domain) fail(`"${options.domain}" is not a domain`, 2);
      const ownerEmail = options.account === undefined ? undefined : normaliseEmail(options.account);
      if (ownerEmail === null) fail(`--account: "${options.account}" is not a valid e-mail address`, 2);
      const db = await openMigratedDatabase(configOrFail());
      try {
        const { findWebsitesByDomain } = await import('../../modules/websites/websites.repository.ts');
        const { startBuild } = await import('../../modules/analytics/derived-build.ts');
        const all = await findWebsitesByDomain(db.kysely, domain);
        const matching = ownerEmail ? all.filter((website) => website.ownerEmail === ownerEmail) : all;
        if (matching.length === 0) fail(`no website has the domain ${domain}${ownerEmail ? ` with the owner ${ownerEmail}` : ''}`, 1);
        if (matching.length > 1) {
          fail(`${matching.length} accounts have a website ${domain} (${matching.map((website) => website.ownerEmail).join(', ')}): add --account <owner e-mail>`, 2);
        }
        const website = matching[0]!;
        const startedAt = new Date();
        await db.kysely.transaction().execute((trx) => startBuild(trx, website.id, OPERATOR_REBUILD, startedAt));
        if (options.json) {
          printJson({ websiteId: website.id, domain, reason: OPERATOR_REBUILD, startedAt: startedAt.toISOString() });
          return;
        }
        process.stdout.write(
          `Recorded a rebuild of ${domain} (${website.id}). The running server builds it in the background; ` +
            `its reports read the raw events until then (GET /api/v1/admin/websites/${website.id}/derived-data shows the progress).\n`,
        );
      } finally {
        await db.close();
      }
    });
}
