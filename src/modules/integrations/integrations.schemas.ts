import { type TObject, Type } from 'typebox';
import { Nullable, Timestamp } from '../../http/schemas.ts';
import { WebhookStatus } from './webhooks.schemas.ts';
import { CONNECT_FIELDS, HOSTED_NAMES, PROVIDERS, type Provider, RESYNC_PROVIDER, hostedFieldName, isApiProvider } from './providers.ts';

/** A credential: a non-empty string of at most 512 characters without white space. */
const Credential = Type.String({ minLength: 1, maxLength: 512, pattern: '^\\S+$', description: 'stored encrypted; never returned' });

function credentialsBody(fields: readonly string[]): TObject {
  // The example only shows the shape: a made-up credential connects (it is stored, not checked).
  const example = Object.fromEntries(fields.map((field) => [field, `${field}-from-the-provider-dashboard`]));
  return Type.Object(Object.fromEntries(fields.map((field) => [field, Credential])), { additionalProperties: false, examples: [example] });
}

/** The connect body in Sightline's field names: the route's schema, and what is stored. */
export function connectBody(provider: Provider): TObject {
  return credentialsBody(CONNECT_FIELDS[provider] ?? []);
}

/** The same body in the hosted service's field names, under the same rules (credential-names.ts). */
export function hostedConnectBody(provider: Provider): TObject {
  return credentialsBody((CONNECT_FIELDS[provider] ?? []).map(hostedFieldName));
}

export const Resync = Type.Object({
  status: Type.Enum(['queued', 'running', 'succeeded', 'failed']),
  requestedAt: Timestamp,
  finishedAt: Nullable(Timestamp),
  error: Nullable(Type.String()),
});

const Account = Type.Object(
  {
    status: Type.Enum(['verifying', 'verified', 'failed'], { description: 'verifying until the provider has answered the check of the credential' }),
    name: Nullable(Type.String({ description: "the provider's account, store or organisation name (null where its API has none)" })),
    currency: Nullable(Type.String({ description: "the account's default currency, as the provider gives it" })),
    error: Nullable(Type.String({ description: 'what the provider answered (a revoked key, a missing permission); never the credential' })),
    verifiedAt: Nullable(Timestamp),
  },
  { description: "the background check of the credential with the provider's API, after each connect and re-sync" },
);

const History = Type.Object(
  {
    ...Resync.properties,
    pages: Type.Integer({ description: 'pages of payments imported so far' }),
    paymentsImported: Type.Integer({ description: 'payments read from the provider and recorded (each transaction once)' }),
    attempts: Type.Integer({ description: 'attempts so far; a failed one is retried later, until the last' }),
  },
  { description: "the import of the last 365 days of the provider's payments, on connect and on a re-sync" },
);

const ProviderStatus = Type.Object({ connected: Type.Boolean(), connectedAt: Nullable(Timestamp), webhook: WebhookStatus });
/** Providers with an API credential: the check of the credential and the history import, null while not connected. */
const ApiProviderStatus = Type.Object({ ...ProviderStatus.properties, account: Nullable(Account), history: Nullable(History) });
const ResyncProviderStatus = Type.Object({
  ...ApiProviderStatus.properties,
  resync: Nullable(Resync),
  keyExpiresAt: Type.Union([Timestamp, Type.Null()], { description: 'when the API key expires: null, Sightline does not ask the provider' }),
});
const statusOf = (provider: Provider) => (provider === RESYNC_PROVIDER ? ResyncProviderStatus : isApiProvider(provider) ? ApiProviderStatus : ProviderStatus);

export const IntegrationStatus = Type.Object({
  ...Object.fromEntries(PROVIDERS.map((p) => [p, statusOf(p)])),
  // The same status under the hosted service's names (website-api.md section 7).
  ...Object.fromEntries(PROVIDERS.map((p) => [HOSTED_NAMES[p], statusOf(p)])),
  currency: Type.String({ description: "the website's currency" }),
});

export const Connected = Type.Object({
  message: Type.String(),
  provider: Type.String(),
  connected: Type.Boolean(),
  connectedAt: Timestamp,
  currency: Type.String({ description: "the website's currency" }),
});

export const Disconnected = Type.Object({ message: Type.String(), disconnected: Type.Boolean() });

export const ResyncQueued = Type.Object({ message: Type.String(), resync: Resync });
