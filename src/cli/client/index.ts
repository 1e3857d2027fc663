import type { Command } from 'commander';
import { registerAlertCommands } from './alerts.ts';
import { registerCurrencyRateCommands } from './currency-rates.ts';
import { registerAnalyticsCommands } from './analytics.ts';
import { registerApiKeyCommands } from './apikeys.ts';
import { registerFunnelCommands } from './funnels.ts';
import { registerGoalCommands } from './goals.ts';
import { registerIntegrationCommands } from './integrations.ts';
import { registerInvitationCommands } from './invitations.ts';
import { registerMailReportCommands } from './mail-reports.ts';
import { registerNoteCommands } from './notes.ts';
import { registerSegmentCommands } from './segments.ts';
import { registerExportCommand } from './export.ts';
import { registerImportCommands } from './imports.ts';
import { registerSessionCommands } from './session.ts';
import { registerSharedLinkCommands } from './shared-links.ts';
import { registerTeamCommands } from './team.ts';
import { registerTokenCommands } from './tokens.ts';
import { registerVisitorCommands } from './visitors.ts';
import { registerWebsiteCommands } from './websites.ts';

/** The commands that talk to a running server over the API (every admin endpoint and the website API's reads). */
export function registerClientCommands(program: Command): void {
  registerSessionCommands(program);
  registerWebsiteCommands(program);
  registerTokenCommands(program);
  registerApiKeyCommands(program);
  registerGoalCommands(program);
  registerFunnelCommands(program);
  registerAlertCommands(program);
  registerTeamCommands(program);
  registerInvitationCommands(program);
  registerIntegrationCommands(program);
  registerCurrencyRateCommands(program);
  registerSharedLinkCommands(program);
  registerMailReportCommands(program);
  registerNoteCommands(program);
  registerSegmentCommands(program);
  registerImportCommands(program);
  registerAnalyticsCommands(program);
  registerVisitorCommands(program);
  registerExportCommand(program);
  program.addHelpText(
    'after',
    `
Talking to a running server (SIGHTLINE_API_BASE and SIGHTLINE_TOKEN override the saved login):
  $ npx sightline login --base-url http://127.0.0.1:3000     # paste the token at the hidden prompt
  $ npx sightline websites list
  $ npx sightline websites list --json | jq -r '.[].domain'

Exit codes: 0 success, 1 the API refused or could not be reached (its message on stderr),
2 a usage error (bad option, missing --yes without a terminal, not logged in).`,
  );
}
