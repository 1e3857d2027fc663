import { type Command, InvalidArgumentError } from 'commander';
import { type Item, type RequestBody, action, call, connect, usage, websiteIdOf } from './api.ts';
import { type JsonOption, done, emit, printTable, say, withJson } from './output.ts';
import { type ConfirmOptions, confirm, readJsonBody } from './prompt.ts';
import { type WebsiteOption, withWebsite } from './websites.ts';

type Alert = Item<'/api/v1/admin/websites/{websiteId}/alerts', 'get'>;
type CreateBody = RequestBody<'/api/v1/admin/websites/{websiteId}/alerts', 'post'>;
type UpdateBody = RequestBody<'/api/v1/admin/websites/{websiteId}/alerts/{alertId}', 'put'>;

interface AlertOptions extends WebsiteOption, JsonOption {
  name?: string;
  goal?: string;
  subject?: string | false;
  message?: string;
  disabled?: boolean;
  enable?: boolean;
  disable?: boolean;
  body?: string;
}

function positiveInteger(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new InvalidArgumentError('must be a whole number of 1 or more');
  return number;
}

function printAlerts(alerts: Alert[]): void {
  printTable(
    alerts,
    [
      { header: 'id', value: (a) => a.id },
      { header: 'name', value: (a) => a.name },
      { header: 'goal', value: (a) => a.trigger.goalName },
      { header: 'enabled', value: (a) => a.isEnabled },
      { header: 'subject', value: (a) => a.template.subject },
      { header: 'last triggered', value: (a) => a.lastTriggeredAt ?? 'never' },
    ],
    'No alerts.',
  );
}

/** The --body object with the flags laid over it; `template` merges field by field. */
async function alertBody(options: AlertOptions): Promise<Record<string, unknown>> {
  const base = options.body ? await readJsonBody(options.body) : {};
  const template: Record<string, unknown> = { ...((base.template as Record<string, unknown> | undefined) ?? {}) };
  if (options.subject !== undefined) template.subject = options.subject === false ? null : options.subject;
  if (options.message !== undefined) template.message = options.message;
  const enabled = options.disabled || options.disable ? false : options.enable ? true : undefined;
  return {
    ...base,
    ...(options.name !== undefined ? { name: options.name } : {}),
    ...(options.goal !== undefined ? { trigger: { goalName: options.goal } } : {}),
    ...(Object.keys(template).length ? { template } : {}),
    ...(enabled !== undefined ? { isEnabled: enabled } : {}),
  };
}

export function registerAlertCommands(program: Command): void {
  const alerts = program
    .command('alerts')
    .description('e-mail alerts on goals: list, create, update, delete, and their history')
    .addHelpText(
      'after',
      `
An alert e-mails the website owner when a goal fires (at most once a minute per alert by default).

Examples:
  $ sightline alerts list -w example.com
  $ sightline alerts create -w example.com --name "New sale" --goal purchase --subject "Ka-ching" --message "Someone just bought something."
  $ sightline alerts create -w example.com --body alert.json
  $ sightline alerts update -w example.com 665f1c2e9b1d4a0012345678 --disable
  $ sightline alerts history -w example.com --limit 20
  $ sightline alerts history -w example.com --json | jq .counts
  $ sightline alerts delete -w example.com 665f1c2e9b1d4a0012345678 --yes`,
    );

  withJson(withWebsite(alerts.command('list').description("the website's alerts, oldest first")), 'the alerts').action(
    action(async (options: WebsiteOption & JsonOption) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const body = await call(
        connection.client.GET('/api/v1/admin/websites/{websiteId}/alerts', { params: { path: { websiteId } } }),
        connection.settings.baseUrl,
      );
      emit(options, body, () => printAlerts(body.data));
    }),
  );

  withJson(
    withWebsite(
      alerts
        .command('create')
        .description('create an alert (enabled unless --disabled)')
        .option('--name <name>', 'the alert name (1 to 100 characters)')
        .option('--goal <goal>', 'the goal name that fires it')
        .option('--subject <text>', 'the e-mail subject (up to 200 characters)')
        .option('--message <text>', 'the e-mail text (10 to 2000 characters)')
        .option('--disabled', 'create it switched off')
        .option('--body <file>', 'a JSON alert {"name", "trigger": {"goalName"}, "template": {"subject", "message"}, "isEnabled"} (- for stdin); the options above override its fields'),
    ),
    'the new alert',
  ).action(
    action(async (options: AlertOptions) => {
      const request = await alertBody(options);
      if (request.name === undefined || request.trigger === undefined || request.template === undefined) {
        usage('give --name, --goal and --message (or --body)');
      }
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const body = await call(
        connection.client.POST('/api/v1/admin/websites/{websiteId}/alerts', { params: { path: { websiteId } }, body: request as CreateBody }),
        connection.settings.baseUrl,
      );
      emit(options, body, () => printAlerts(body.data));
      say(`Created alert "${body.data[0]!.name}" (${body.data[0]!.id}).`);
    }),
  );

  withJson(
    withWebsite(
      alerts
        .command('update')
        .description('change an alert; only what is given changes (the template merges field by field)')
        .argument('<alertId>', 'the alert id (from "sightline alerts list")')
        .option('--name <name>', 'the new name')
        .option('--goal <goal>', 'the goal name that fires it')
        .option('--subject <text>', 'the e-mail subject')
        .option('--no-subject', 'clear the subject')
        .option('--message <text>', 'the e-mail text (10 to 2000 characters)')
        .option('--enable', 'switch it on')
        .option('--disable', 'switch it off')
        .option('--body <file>', 'a JSON object of fields to send (- for stdin); the options above override its fields'),
    ),
    'the updated alert',
  ).action(
    action(async (alertId: string, options: AlertOptions) => {
      if (options.enable && options.disable) usage('give --enable or --disable, not both');
      const request = await alertBody(options);
      if (Object.keys(request).length === 0) usage('nothing to change: give an option (see "sightline alerts update --help")');
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const body = await call(
        connection.client.PUT('/api/v1/admin/websites/{websiteId}/alerts/{alertId}', {
          params: { path: { websiteId, alertId } },
          body: request as UpdateBody,
        }),
        connection.settings.baseUrl,
      );
      emit(options, body, () => printAlerts(body.data));
      say(`Updated alert "${body.data[0]!.name}".`);
    }),
  );

  withJson(
    withWebsite(
      alerts
        .command('delete')
        .description('delete an alert (its history is kept)')
        .argument('<alertId>', 'the alert id')
        .option('-y, --yes', 'do not ask for confirmation (needed when there is no terminal)'),
    ),
    'the result',
  ).action(
    action(async (alertId: string, options: WebsiteOption & JsonOption & ConfirmOptions) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      await confirm(`delete alert ${alertId}`, 'No more e-mails are sent for it.', options);
      const body = await call(
        connection.client.DELETE('/api/v1/admin/websites/{websiteId}/alerts/{alertId}', {
          params: { path: { websiteId, alertId } },
          body: {},
        }),
        connection.settings.baseUrl,
      );
      done(options, body, body.data[0]?.message ?? 'Alert deleted.');
    }),
  );

  withJson(
    withWebsite(
      alerts
        .command('history')
        .description('recent alert firings, newest first, with counts per status')
        .option('--alert <alertId>', 'only this alert')
        .option('--limit <n>', 'how many entries (default 50, at most 100)', positiveInteger),
    ),
    '{"data": [entries], "counts": {queued, sent, failed, skipped, throttled, total}}',
  ).action(
    action(async (options: WebsiteOption & JsonOption & { alert?: string; limit?: number }) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const query = {
        ...(options.alert !== undefined ? { alertId: options.alert } : {}),
        ...(options.limit !== undefined ? { limit: options.limit } : {}),
      };
      const body = await call(
        connection.client.GET('/api/v1/admin/websites/{websiteId}/alerts/history', { params: { path: { websiteId }, query } }),
        connection.settings.baseUrl,
      );
      emit(options, body, () => {
        printTable(
          body.data,
          [
            { header: 'triggered', value: (h) => h.triggeredAt },
            { header: 'alert', value: (h) => h.alertName },
            { header: 'goal', value: (h) => h.goalName },
            { header: 'status', value: (h) => h.status },
            { header: 'visitor', value: (h) => h.visitorId },
            { header: 'error', value: (h) => h.error },
          ],
          'No alert has fired yet.',
        );
        const { queued, sent, failed, skipped, throttled, total } = body.counts;
        say(`${total} in all: ${queued} queued, ${sent} sent, ${failed} failed, ${skipped} skipped, ${throttled} throttled.`);
      });
    }),
  );
}
