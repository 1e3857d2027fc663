import { type TObject, Type } from 'typebox';
import { Nullable, Timestamp } from '../../http/schemas.ts';
import { CONNECT_FIELDS, PROVIDERS, type Provider, RESYNC_PROVIDER } from './providers.ts';

/** A credential: a non-empty string of at most 512 characters without white space. */
const Credential = Type.String({ minLength: 1, maxLength: 512, pattern: '^\\S+$', description: 'stored encrypted; never returned' });

export function connectBody(provider: Provider): TObject {
  const fields = CONNECT_FIELDS[provider] ?? [];
  // The example only shows the shape: a made-up credential connects (it is stored, not checked).
  const example = Object.fromEntries(fields.map((field) => [field, `${field}-from-the-provider-dashboard`]));
  return Type.Object(Object.fromEntries(fields.map((field) => [field, Credential])), { additionalProperties: false, examples: [example] });
}

export const Resync = Type.Object({
  status: Type.Enum(['queued', 'running', 'succeeded', 'failed']),
  requestedAt: Timestamp,
  finishedAt: Nullable(Timestamp),
  error: Nullable(Type.String()),
});

const ProviderStatus = Type.Object({ connected: Type.Boolean(), connectedAt: Nullable(Timestamp) });
const ResyncProviderStatus = Type.Object({ ...ProviderStatus.properties, resync: Nullable(Resync) });

export const IntegrationStatus = Type.Object(
  Object.fromEntries(PROVIDERS.map((p) => [p, p === RESYNC_PROVIDER ? ResyncProviderStatus : ProviderStatus])),
);

export const Connected = Type.Object({
  message: Type.String(),
  provider: Type.String(),
  connected: Type.Boolean(),
  connectedAt: Timestamp,
});

export const Disconnected = Type.Object({ message: Type.String(), disconnected: Type.Boolean() });

export const ResyncQueued = Type.Object({ message: Type.String(), resync: Resync });
