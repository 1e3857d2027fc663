import { type Command, InvalidArgumentError } from 'commander';
import { type Connection, type Success, action, call, connect, usage, websiteIdOf } from './api.ts';
import { type JsonOption, done, emit, printTable, withJson } from './output.ts';
import { type ConfirmOptions, confirm, promptHidden, readStdin, stdinIsTerminal } from './prompt.ts';
import { type WebsiteOption, withWebsite } from './websites.ts';
import { shortTime } from './table.ts';

// Payment-provider integrations. Credentials are secrets: they come from environment variables
// named after the fields, or stdin, or a hidden prompt; never from the command line.

export const PROVIDERS = ['provider-one', 'provider-two', 'provider-three', 'provider-four', 'provider-five', 'provider-six'] as const;
type Provider = (typeof PROVIDERS)[number];

export const CONNECT_FIELDS = {
  'provider-one': ['providerOneRestrictedKey'],
  'provider-two': ['providerTwoApiKey', 'providerTwoStoreId'],
  'provider-three': ['providerThreeAccessToken', 'providerThreeOrgId'],
  'provider-four': ['providerFourApiKey'],
} as const;
type ConnectProvider = keyof typeof CONNECT_FIELDS;

type Status = Success<'/api/v1/admin/websites/{websiteId}/integrations', 'get'>['data'][number];

/** providerOneRestrictedKey -> PROVIDER_ONE_RESTRICTED_KEY */
export function envName(field: string): string {
  return field.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
}

function providerArgument(value: string): Provider {
  if ((PROVIDERS as readonly string[]).includes(value)) return value as Provider;
  throw new InvalidArgumentError(`expected one of ${PROVIDERS.join(', ')}`);
}

function connectProviderArgument(value: string): ConnectProvider {
  if (value in CONNECT_FIELDS) return value as ConnectProvider;
  throw new InvalidArgumentError(
    `expected one of ${Object.keys(CONNECT_FIELDS).join(', ')} (provider-five and provider-six are connected by "webhook-secret")`,
  );
}

/** Each field from its environment variable, else stdin (a JSON object, or one line for one field), else a hidden prompt. */
async function readCredentials(provider: ConnectProvider): Promise<Record<string, string>> {
  const fields: readonly string[] = CONNECT_FIELDS[provider];
  const values: Record<string, string> = {};
  for (const field of fields) {
    const value = process.env[envName(field)]?.trim();
    if (value) values[field] = value;
  }
  let missing = fields.filter((field) => !(field in values));
  if (missing.length > 0 && !stdinIsTerminal()) {
    const text = (await readStdin()).trim();
    if (text.startsWith('{')) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        usage('stdin starts with "{" but is not valid JSON');
      }
      for (const field of missing) {
        const value = (parsed as Record<string, unknown>)[field];
        if (typeof value === 'string' && value.trim()) values[field] = value.trim();
      }
    } else if (text && missing.length === 1) {
      if (/\s/.test(text)) usage(`stdin must hold the ${missing[0]} value alone (one line, no spaces)`);
      values[missing[0]!] = text;
    } else if (text) {
      usage(`stdin must hold a JSON object with ${missing.join(' and ')} (more than one value is missing)`);
    }
  } else if (missing.length > 0) {
    for (const field of missing) {
      const value = await promptHidden(`${field} for ${provider} (input hidden): `);
      if (value) values[field] = value;
    }
  }
  missing = fields.filter((field) => !(field in values));
  if (missing.length > 0) {
    usage(`missing ${missing.join(', ')}: set ${missing.map(envName).join(', ')}, or pipe the value(s) to stdin`);
  }
  return values;
}

async function postConnect(connection: Connection, websiteId: string, provider: ConnectProvider, values: Record<string, string>) {
  const { client, settings } = connection;
  const params = { path: { websiteId } };
  const v = (field: string) => values[field]!;
  switch (provider) {
    case 'provider-one':
      return call(
        client.POST('/api/v1/admin/websites/{websiteId}/integrations/provider-one', {
          params,
          body: { providerOneRestrictedKey: v('providerOneRestrictedKey') },
        }),
        settings.baseUrl,
      );
    case 'provider-two':
      return call(
        client.POST('/api/v1/admin/websites/{websiteId}/integrations/provider-two', {
          params,
          body: { providerTwoApiKey: v('providerTwoApiKey'), providerTwoStoreId: v('providerTwoStoreId') },
        }),
        settings.baseUrl,
      );
    case 'provider-three':
      return call(
        client.POST('/api/v1/admin/websites/{websiteId}/integrations/provider-three', {
          params,
          body: { providerThreeAccessToken: v('providerThreeAccessToken'), providerThreeOrgId: v('providerThreeOrgId') },
        }),
        settings.baseUrl,
      );
    case 'provider-four':
      return call(
        client.POST('/api/v1/admin/websites/{websiteId}/integrations/provider-four', {
          params,
          body: { providerFourApiKey: v('providerFourApiKey') },
        }),
        settings.baseUrl,
      );
  }
}

async function deleteConnection(connection: Connection, websiteId: string, provider: Provider) {
  const { client, settings } = connection;
  const init = { params: { path: { websiteId } }, body: {} };
  switch (provider) {
    case 'provider-one':
      return call(client.DELETE('/api/v1/admin/websites/{websiteId}/integrations/provider-one', init), settings.baseUrl);
    case 'provider-two':
      return call(client.DELETE('/api/v1/admin/websites/{websiteId}/integrations/provider-two', init), settings.baseUrl);
    case 'provider-three':
      return call(client.DELETE('/api/v1/admin/websites/{websiteId}/integrations/provider-three', init), settings.baseUrl);
    case 'provider-four':
      return call(client.DELETE('/api/v1/admin/websites/{websiteId}/integrations/provider-four', init), settings.baseUrl);
    case 'provider-five':
      return call(client.DELETE('/api/v1/admin/websites/{websiteId}/integrations/provider-five', init), settings.baseUrl);
    case 'provider-six':
      return call(client.DELETE('/api/v1/admin/websites/{websiteId}/integrations/provider-six', init), settings.baseUrl);
  }
}

/** The webhook's signing secret: WEBHOOK_SIGNING_SECRET, else stdin (one line), else a hidden prompt. */
async function readSigningSecret(provider: Provider): Promise<string> {
  const fromEnv = process.env.WEBHOOK_SIGNING_SECRET?.trim();
  if (fromEnv) return fromEnv;
  const text = stdinIsTerminal() ? await promptHidden(`webhook signing secret of ${provider} (input hidden): `) : (await readStdin()).trim();
  if (!text) usage('missing the signing secret: set WEBHOOK_SIGNING_SECRET, or pipe it to stdin');
  if (text.includes('\n')) usage('stdin must hold the signing secret alone, on one line');
  return text;
}

async function putWebhookSecret(connection: Connection, websiteId: string, provider: Provider, signingSecret: string) {
  const { client, settings } = connection;
  const init = { params: { path: { websiteId } }, body: { signingSecret } };
  switch (provider) {
    case 'provider-one':
      return call(client.PUT('/api/v1/admin/websites/{websiteId}/integrations/provider-one/webhook', init), settings.baseUrl);
    case 'provider-two':
      return call(client.PUT('/api/v1/admin/websites/{websiteId}/integrations/provider-two/webhook', init), settings.baseUrl);
    case 'provider-three':
      return call(client.PUT('/api/v1/admin/websites/{websiteId}/integrations/provider-three/webhook', init), settings.baseUrl);
    case 'provider-four':
      return call(client.PUT('/api/v1/admin/websites/{websiteId}/integrations/provider-four/webhook', init), settings.baseUrl);
    case 'provider-five':
      return call(client.PUT('/api/v1/admin/websites/{websiteId}/integrations/provider-five/webhook', init), settings.baseUrl);
    case 'provider-six':
      return call(client.PUT('/api/v1/admin/websites/{websiteId}/integrations/provider-six/webhook', init), settings.baseUrl);
  }
}

async function postResync(connection: Connection, websiteId: string, provider: ConnectProvider) {
  const { client, settings } = connection;
  const init = { params: { path: { websiteId } }, body: {} };
  switch (provider) {
    case 'provider-one':
      return call(client.POST('/api/v1/admin/websites/{websiteId}/integrations/provider-one/resync', init), settings.baseUrl);
    case 'provider-two':
      return call(client.POST('/api/v1/admin/websites/{websiteId}/integrations/provider-two/resync', init), settings.baseUrl);
    case 'provider-three':
      return call(client.POST('/api/v1/admin/websites/{websiteId}/integrations/provider-three/resync', init), settings.baseUrl);
    case 'provider-four':
      return call(client.POST('/api/v1/admin/websites/{websiteId}/integrations/provider-four/resync', init), settings.baseUrl);
  }
}

function webhookText(status: Status[Provider]): string {
  const { webhook } = status;
  if (!webhook.secretSet) return 'no secret';
  if (!webhook.lastEventAt) return 'no event yet';
  return `${webhook.lastEventType} ${shortTime(webhook.lastEventAt)} (${webhook.eventsReceived})`;
}

function resyncText(status: Status[Provider]): string {
  if (!('resync' in status) || !status.resync) return '-';
  const { status: state, requestedAt, error } = status.resync;
  return `${state} (requested ${shortTime(requestedAt)})${error ? `: ${error}` : ''}`;
}

const CREDENTIAL_HELP = Object.entries(CONNECT_FIELDS)
  .map(([provider, fields]) => `  ${provider.padEnd(15)} ${fields.map(envName).join(', ')}`)
  .join('\n');

export function registerIntegrationCommands(program: Command): void {
  const integrations = program
    .command('integrations')
    .description('payment-provider integrations: status, connect, disconnect, resync, webhook-secret')
    .addHelpText(
      'after',
      `
Credentials are never command-line arguments. "connect" reads each one from an environment
variable named after it, else from stdin (a JSON object, or one line when one value is needed),
else from a hidden prompt:
${CREDENTIAL_HELP}
The server stores them encrypted and never returns them.

Examples:
  $ sightline integrations status -w example.com
  $ PROVIDER_ONE_RESTRICTED_KEY=rk_live_... sightline integrations connect provider-one -w example.com
  $ pass show provider-two.json | sightline integrations connect provider-two -w example.com
  $ sightline integrations resync provider-one -w example.com
  $ WEBHOOK_SIGNING_SECRET=whsec_... sightline integrations webhook-secret provider-one -w example.com
  $ sightline integrations disconnect provider-one -w example.com --yes`,
    );

  withJson(withWebsite(integrations.command('status').description('whether each provider is connected (credentials are never shown)')), 'the status').action(
    action(async (options: WebsiteOption & JsonOption) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const body = await call(
        connection.client.GET('/api/v1/admin/websites/{websiteId}/integrations', { params: { path: { websiteId } } }),
        connection.settings.baseUrl,
      );
      emit(options, body, () => {
        const status = body.data[0]!;
        printTable(
          PROVIDERS.filter((provider) => provider in status),
          [
            { header: 'provider', value: (provider) => provider },
            { header: 'connected', value: (provider) => status[provider].connected },
            { header: 'since', value: (provider) => status[provider].connectedAt },
            { header: 'resync', value: (provider) => resyncText(status[provider]) },
            { header: 'webhook', value: (provider) => webhookText(status[provider]) },
          ],
          'No providers.',
        );
      });
    }),
  );

  withJson(
    withWebsite(
      integrations
        .command('connect')
        .description('connect a provider (connecting again replaces the credentials)')
        .argument('<provider>', `one of ${Object.keys(CONNECT_FIELDS).join(', ')}`, connectProviderArgument),
    ),
    'the result',
  ).action(
    action(async (provider: ConnectProvider, options: WebsiteOption & JsonOption) => {
      const connection = connect();
      const values = await readCredentials(provider);
      const websiteId = await websiteIdOf(connection, options.website);
      const body = await postConnect(connection, websiteId, provider, values);
      done(options, body, body.data[0]?.message ?? `Connected ${provider}.`);
    }),
  );

  withJson(
    withWebsite(
      integrations
        .command('disconnect')
        .description('disconnect a provider and delete its stored credentials (nothing happens if it is not connected)')
        .argument('<provider>', `one of ${PROVIDERS.join(', ')}`, providerArgument)
        .option('-y, --yes', 'do not ask for confirmation (needed when there is no terminal)'),
    ),
    'the result',
  ).action(
    action(async (provider: Provider, options: WebsiteOption & JsonOption & ConfirmOptions) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      await confirm(`disconnect ${provider} from ${options.website}`, 'Its stored credentials are deleted.', options);
      const body = await deleteConnection(connection, websiteId, provider);
      const result = body.data[0]!;
      done(options, body, result.disconnected ? result.message : `${provider} was not connected; nothing changed.`);
    }),
  );

  withJson(
    withWebsite(
      integrations
        .command('resync')
        .description('check the credential again and re-import 365 days of payments (the provider must be connected)')
        .argument('[provider]', `one of ${Object.keys(CONNECT_FIELDS).join(', ')}; provider-four when left out`, connectProviderArgument),
    ),
    'the result',
  ).action(
    action(async (provider: ConnectProvider | undefined, options: WebsiteOption & JsonOption) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      // No provider: provider-four's re-sync at the route admin-api.md names (the same job).
      const body = provider
        ? await postResync(connection, websiteId, provider)
        : await call(
            connection.client.PATCH('/api/v1/admin/websites/{websiteId}/integrations/provider-four', { params: { path: { websiteId } }, body: {} }),
            connection.settings.baseUrl,
          );
      done(options, body, body.data[0]?.message ?? 'Re-sync queued.');
    }),
  );

  withJson(
    withWebsite(
      integrations
        .command('webhook-secret')
        .description("store the signing secret of the provider's webhook (provider-five and provider-six are connected by it)")
        .argument('<provider>', `one of ${PROVIDERS.join(', ')}`, providerArgument),
    ),
    'the result',
  ).action(
    action(async (provider: Provider, options: WebsiteOption & JsonOption) => {
      const connection = connect();
      const signingSecret = await readSigningSecret(provider);
      const websiteId = await websiteIdOf(connection, options.website);
      const body = await putWebhookSecret(connection, websiteId, provider, signingSecret);
      const result = body.data[0]!;
      done(options, body, `${result.message}. Paste this address into ${provider}'s webhook settings: ${result.webhook.url}`);
    }),
  );
}
