import type { Command } from 'commander';
import { action, call, connect, usage, websiteIdOf } from './api.ts';
import { type JsonOption, emit, printRecord, withJson } from './output.ts';
import { type WebsiteOption, withWebsite } from './websites.ts';

// The caller's own reports by mail on a website (weekly, monthly, traffic-spike alerts). The
// website's switches are "websites update --weekly-reports / --traffic-spike-alerts".

interface MailReports {
  weekly: boolean;
  monthly: boolean;
  spike: boolean;
  sendWeeklyReports: boolean;
  sendViralTrafficAlerts: boolean;
}

function printMailReports(reports: MailReports): void {
  const taken = (mine: boolean, website: boolean) => (!website ? 'no (the website sends none)' : mine ? 'yes' : 'no');
  printRecord([
    ['Weekly report', taken(reports.weekly, reports.sendWeeklyReports)],
    ['Monthly report', taken(reports.monthly, reports.sendWeeklyReports)],
    ['Traffic-spike alerts', taken(reports.spike, reports.sendViralTrafficAlerts)],
  ]);
}

export function registerMailReportCommands(program: Command): void {
  const reports = program
    .command('mail-reports')
    .description('your own reports by mail on a website: weekly, monthly, traffic-spike alerts')
    .addHelpText(
      'after',
      `
Examples:
  $ sightline mail-reports show -w example.com
  $ sightline mail-reports set --monthly --no-spike -w example.com`,
    );

  withJson(withWebsite(reports.command('show').description('which reports by mail you take for the website')), 'your subscription').action(
    action(async (options: WebsiteOption & JsonOption) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const body = await call(connection.client.GET('/api/v1/admin/websites/{websiteId}/mail-reports', { params: { path: { websiteId } } }), connection.settings.baseUrl);
      emit(options, body, () => printMailReports(body.data[0]!));
    }),
  );

  withJson(
    withWebsite(
      reports
        .command('set')
        .description('choose which reports by mail you take; only the options given change')
        .option('--weekly', 'take the weekly report')
        .option('--no-weekly', 'stop the weekly report')
        .option('--monthly', 'take the monthly report')
        .option('--no-monthly', 'stop the monthly report')
        .option('--spike', 'take the traffic-spike alerts')
        .option('--no-spike', 'stop the traffic-spike alerts'),
    ),
    'your subscription',
  ).action(
    action(async (options: WebsiteOption & JsonOption & { weekly?: boolean; monthly?: boolean; spike?: boolean }) => {
      const changes = Object.fromEntries((['weekly', 'monthly', 'spike'] as const).filter((kind) => options[kind] !== undefined).map((kind) => [kind, options[kind]!]));
      if (Object.keys(changes).length === 0) usage('nothing to change: give --weekly, --monthly or --spike (or their --no- forms)');
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const body = await call(
        connection.client.PUT('/api/v1/admin/websites/{websiteId}/mail-reports', { params: { path: { websiteId } }, body: changes }),
        connection.settings.baseUrl,
      );
      emit(options, body, () => printMailReports(body.data[0]!));
    }),
  );
}
