import { type Command, Option } from 'commander';
import { type Item, type RequestBody, action, call, connect, usage, websiteIdOf } from './api.ts';
import { type JsonOption, done, emit, printRecord, printTable, say, withJson } from './output.ts';
import { type ConfirmOptions, confirm, readJsonBody } from './prompt.ts';

type Website = Item<'/api/v1/admin/websites/{websiteId}', 'get'>;
type UpdateBody = RequestBody<'/api/v1/admin/websites/{websiteId}', 'put'>;
type DerivedData = Item<'/api/v1/admin/websites/{websiteId}/derived-data', 'get'>;

const COLOR_SCHEMES = ['red', 'orange', 'yellow', 'green', 'purple', 'pink', 'gray', 'blue', 'teal', 'indigo'];

export const WEBSITE_ARGUMENT = 'the website id, or its domain';

/** A comma-separated list option: "a, b" -> ["a", "b"]; the --no- form (false) clears it (null). */
function list(value: string | false | undefined): string[] | null | undefined {
  if (value === undefined) return undefined;
  if (value === false) return null;
  return value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

function nullable<T>(value: T | false | undefined): T | null | undefined {
  return value === false ? null : value;
}

export function printWebsite(website: Website): void {
  printRecord([
    ['Id', website.id],
    ['Domain', website.domain],
    ['Name', website.name],
    ['Tracking id', website.trackingId],
    ['Your role', website.role],
    ['Timezone', website.timezone],
    ['Currency', website.currency],
    ['KPI', website.kpi],
    ['KPI color scheme', website.kpiColorScheme],
    ['Revenue metric', website.revenueMetric],
    ['Cookieless', website.isCookieless],
    ['Renewal revenue', website.includeRenewalRevenue],
    ['Public dashboard', website.isPublicDashboardEnabled],
    ['Weekly reports', website.sendWeeklyReports],
    ['Traffic-spike alerts', website.sendViralTrafficAlerts],
    ['Allowed hostnames', website.allowedHostnames],
    ['Excluded hostnames', website.excludedHostnames],
    ['Excluded IPs', website.excludedIps],
    ['Excluded paths', website.excludedPaths],
    ['Excluded countries', website.excludedCountries],
    ['Created', website.createdAt],
    ['Updated', website.updatedAt],
  ]);
}

/** Whether the website's derived data is ready, or how far its rebuild (a new time zone, or a build) is. */
export function printDerivedData(derived: DerivedData): void {
  printRecord([
    ['State', derived.state],
    ['Reason', derived.reason],
    ['Detail', derived.detail],
    ['From timezone', derived.fromTimezone],
    ['To timezone', derived.toTimezone],
    ['Next timezone', derived.nextTimezone],
    ['Visitors done', derived.visitorsDone],
    ['Visitors total', derived.visitorsTotal],
    ['Events done', derived.eventsDone],
    ['Events total', derived.eventsTotal],
    ['Progress', derived.progress === null ? null : `${Math.floor(derived.progress * 100)}%`],
    ['Started', derived.startedAt],
    // Funnels created or given new steps, built alone (their reports read raw until then), oldest first.
    ['Funnel builds', derived.funnelBuilds.length === 0 ? null : derived.funnelBuilds.map((build) => `${build.funnelId} ${build.progress === null ? '0' : Math.floor(build.progress * 100)}%`).join(', ')],
  ]);
}

interface UpdateOptions extends JsonOption {
  body?: string;
  name?: string;
  domain?: string;
  timezone?: string;
  currency?: string;
  kpi?: string | false;
  kpiColorScheme?: string | false;
  revenueMetric?: 'revenue' | 'mrr';
  cookieless?: boolean;
  publicDashboard?: boolean;
  includeRenewalRevenue?: boolean;
  weeklyReports?: boolean;
  trafficSpikeAlerts?: boolean;
  allowedHostnames?: string | false;
  excludedHostnames?: string | false;
  excludedIps?: string | false;
  excludedPaths?: string | false;
  excludedCountries?: string | false;
}

export function registerWebsiteCommands(program: Command): void {
  const websites = program
    .command('websites')
    .description('list, create, inspect and configure websites')
    .addHelpText(
      'after',
      `
A website is named by its id or by its domain wherever a command takes <website>.

Examples:
  $ sightline websites list
  $ sightline websites create --domain example.com --timezone Europe/Paris --name "Example"
  $ sightline websites get example.com
  $ sightline websites derived-data example.com
  $ sightline websites update example.com --currency EUR --kpi signup --excluded-paths "/admin/*,/preview/*"
  $ sightline websites update example.com --no-kpi
  $ sightline websites list --json | jq -r '.[].domain'`,
    );

  withJson(websites.command('list').description('the websites this token can see, with your role on each'), 'the websites').action(
    action(async (options: JsonOption) => {
      const connection = connect();
      const body = await call(connection.client.GET('/api/v1/admin/websites'), connection.settings.baseUrl);
      emit(options, body, () =>
        printTable(
          body.data,
          [
            { header: 'id', value: (w) => w.id },
            { header: 'domain', value: (w) => w.domain },
            { header: 'name', value: (w) => w.name },
            { header: 'timezone', value: (w) => w.timezone },
            { header: 'currency', value: (w) => w.currency },
            { header: 'role', value: (w) => w.role },
          ],
          'No websites yet. Create one: sightline websites create --domain example.com --timezone Europe/Paris',
        ),
      );
    }),
  );

  withJson(
    websites.command('get').description("a website's settings").argument('<website>', WEBSITE_ARGUMENT),
    'the website',
  ).action(
    action(async (website: string, options: JsonOption) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, website);
      const body = await call(
        connection.client.GET('/api/v1/admin/websites/{websiteId}', { params: { path: { websiteId } } }),
        connection.settings.baseUrl,
      );
      emit(options, body, () => printWebsite(body.data[0]!));
    }),
  );

  withJson(
    websites
      .command('derived-data')
      .description("whether the website's reports read their rollups (ready) or the raw events while a change of time zone rebuilds them, and how far")
      .argument('<website>', WEBSITE_ARGUMENT),
    'the state of the derived data',
  ).action(
    action(async (website: string, options: JsonOption) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, website);
      const body = await call(
        connection.client.GET('/api/v1/admin/websites/{websiteId}/derived-data', { params: { path: { websiteId } } }),
        connection.settings.baseUrl,
      );
      emit(options, body, () => printDerivedData(body.data[0]!));
    }),
  );

  withJson(
    websites
      .command('create')
      .description('add a website (its currency starts as USD; change it with "websites update")')
      .requiredOption('--domain <domain>', 'the bare host name, e.g. example.com (no scheme, path or port)')
      .requiredOption('--timezone <zone>', 'an IANA time-zone name, e.g. Europe/Paris; reports follow it')
      .option('--name <name>', 'a display name (1 to 100 characters; defaults to the domain)'),
    'the new website',
  ).action(
    action(async (options: JsonOption & { domain: string; timezone: string; name?: string }) => {
      const connection = connect();
      const body = await call(
        connection.client.POST('/api/v1/admin/websites', {
          body: { domain: options.domain, timezone: options.timezone, ...(options.name !== undefined ? { name: options.name } : {}) },
        }),
        connection.settings.baseUrl,
      );
      const website = body.data[0]!;
      emit(options, body, () => printWebsite(website));
      say(`Created website ${website.domain} (${website.id}).`);
    }),
  );

  withJson(
    websites
      .command('update')
      .description('change website settings; only the options given change')
      .argument('<website>', WEBSITE_ARGUMENT)
      .option('--name <name>', 'the display name')
      .option('--domain <domain>', 'the bare host name')
      .option('--timezone <zone>', 'an IANA time-zone name')
      .option('--currency <code>', 'an ISO-4217 code, e.g. EUR')
      .option('--kpi <goal>', 'the goal shown as the key metric (one the website has tracked)')
      .option('--no-kpi', 'clear the KPI')
      .addOption(new Option('--kpi-color-scheme <color>', 'the KPI color').choices(COLOR_SCHEMES))
      .option('--no-kpi-color-scheme', 'clear the KPI color')
      .addOption(new Option('--revenue-metric <metric>', 'how revenue is reported').choices(['revenue', 'mrr']))
      .option('--cookieless', 'do not use cookies; visitors get a daily-rotating id')
      .option('--no-cookieless', 'use cookies again')
      .option('--include-renewal-revenue', 'count subscription renewals in revenue')
      .option('--no-include-renewal-revenue', 'leave renewals out of revenue')
      .option('--public-dashboard', 'let the shared dashboard links open (see "sightline shared-links")')
      .option('--no-public-dashboard', 'close every shared dashboard link at once')
      .option('--weekly-reports', "mail reports to the website's members (weekly; monthly to those who opt in)")
      .option('--no-weekly-reports', 'mail no reports for this website')
      .option('--traffic-spike-alerts', "mail the website's members when an hour's visitors are far above the usual")
      .option('--no-traffic-spike-alerts', 'mail no traffic-spike alerts for this website')
      .option('--allowed-hostnames <list>', 'comma-separated extra host names whose events count (*.example.com allowed)')
      .option('--no-allowed-hostnames', 'clear the list')
      .option('--excluded-hostnames <list>', 'comma-separated host names whose events are dropped')
      .option('--no-excluded-hostnames', 'clear the list')
      .option('--excluded-ips <list>', 'comma-separated IP addresses or CIDR ranges whose events are dropped')
      .option('--no-excluded-ips', 'clear the list')
      .option('--excluded-paths <list>', 'comma-separated paths (starting with /, * wildcard) whose events are dropped')
      .option('--no-excluded-paths', 'clear the list')
      .option('--excluded-countries <list>', 'comma-separated ISO-3166 alpha-2 country codes whose events are dropped')
      .option('--no-excluded-countries', 'clear the list')
      .option('--body <file>', 'a JSON object of settings to send (- for stdin); the options above override its fields'),
    'the updated website',
  ).action(
    action(async (website: string, options: UpdateOptions) => {
      const fromFlags: Record<string, unknown> = {
        name: options.name,
        domain: options.domain,
        timezone: options.timezone,
        currency: options.currency,
        kpi: nullable(options.kpi),
        kpiColorScheme: nullable(options.kpiColorScheme),
        revenueMetric: options.revenueMetric,
        isCookieless: options.cookieless,
        includeRenewalRevenue: options.includeRenewalRevenue,
        isPublicDashboardEnabled: options.publicDashboard,
        sendWeeklyReports: options.weeklyReports,
        sendViralTrafficAlerts: options.trafficSpikeAlerts,
        allowedHostnames: list(options.allowedHostnames),
        excludedHostnames: list(options.excludedHostnames),
        excludedIps: list(options.excludedIps),
        excludedPaths: list(options.excludedPaths),
        excludedCountries: list(options.excludedCountries),
      };
      const changes = Object.fromEntries(Object.entries(fromFlags).filter(([, value]) => value !== undefined));
      const base = options.body ? await readJsonBody(options.body) : {};
      const update = { ...base, ...changes } as UpdateBody;
      if (Object.keys(update).length === 0) {
        usage('nothing to change: give at least one option (see "sightline websites update --help")');
      }
      const connection = connect();
      const websiteId = await websiteIdOf(connection, website);
      const body = await call(
        connection.client.PUT('/api/v1/admin/websites/{websiteId}', { params: { path: { websiteId } }, body: update }),
        connection.settings.baseUrl,
      );
      emit(options, body, () => printWebsite(body.data[0]!));
      say(`Updated ${Object.keys(update).join(', ')}.`);
    }),
  );

  withJson(
    websites
      .command('delete')
      .description('ask to delete a website; the API always refuses (websites are deleted in the dashboard only)')
      .argument('<website>', WEBSITE_ARGUMENT)
      .option('-y, --yes', 'do not ask for confirmation (needed when there is no terminal)'),
    'the result',
  ).action(
    action(async (website: string, options: ConfirmOptions & JsonOption) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, website);
      await confirm(`delete website ${website}`, 'All its data goes with it.', options);
      const body = await call(
        connection.client.DELETE('/api/v1/admin/websites/{websiteId}', { params: { path: { websiteId } } }),
        connection.settings.baseUrl,
      );
      done(options, body, body.data[0]?.message ?? 'Deleted.');
    }),
  );
}

/** The -w/--website option of every website-scoped command. */
export function withWebsite(command: Command): Command {
  const option = new Option('-w, --website <website>', 'the website: its id or its domain').makeOptionMandatory();
  command.addOption(option);
  // First in the help, since every command of the group needs it.
  const options = command.options as Option[];
  options.splice(options.indexOf(option), 1);
  options.unshift(option);
  return command;
}

export interface WebsiteOption {
  website: string;
}
