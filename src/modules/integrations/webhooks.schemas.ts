import { Type } from 'typebox';
import { Id, Nullable, Timestamp } from '../../http/schemas.ts';
import { HOSTED_NAMES, PROVIDERS } from './providers.ts';

/** Shopify's order payloads run to a few hundred KiB; the providers' other events are smaller. */
export const WEBHOOK_BODY_LIMIT = 1024 * 1024;

/** A provider by Sightline's name or the hosted service's. */
export const WebhookProviderName = Type.Enum([...PROVIDERS, ...PROVIDERS.map((p) => HOSTED_NAMES[p])], {
  description: 'provider-one to provider-six, or stripe, lemonsqueezy, polar, paddle, shopify, woocommerce',
});

export const WebhookParams = Type.Object({ provider: WebhookProviderName, websiteId: Id }, { additionalProperties: false });

export const WebhookBody = Type.Unknown({
  description: "The provider's event exactly as it sends it (any content type, at most 1 MiB); its signature is checked over these bytes",
});

export const WebhookReceived = Type.Object({
  received: Type.Literal(true),
  duplicate: Type.Boolean({ description: 'the same event was received before: nothing was recorded again' }),
  payments: Type.Integer({ description: 'payments, renewals and refunds of the event handed to the payment writer, which keeps each transaction once' }),
  skipped: Type.Integer({ description: 'payments of the event the writer refused (an unknown currency)' }),
});

export const SigningSecretBody = Type.Object(
  {
    signingSecret: Type.String({
      minLength: 1,
      maxLength: 512,
      pattern: '^\\S(?:.*\\S)?$',
      description: "the webhook signing secret the provider shows or the owner chose; stored encrypted, never returned",
    }),
  },
  { additionalProperties: false, examples: [{ signingSecret: 'whsec_from-the-provider-dashboard' }] },
);

export const WebhookStatus = Type.Object(
  {
    url: Type.String({ description: "the address to paste into the provider's webhook settings" }),
    secretSet: Type.Boolean({ description: 'whether a signing secret is stored (it is never returned)' }),
    secretSetAt: Nullable(Timestamp),
    lastEventAt: Nullable(Timestamp),
    lastEventType: Nullable(Type.String({ description: "the provider's name for the last verified event" })),
    eventsReceived: Type.Integer({ description: 'verified events received, each once' }),
  },
  { description: "the provider's webhook: where it posts, and what arrived" },
);

export const WebhookSecretSet = Type.Object({
  message: Type.String(),
  provider: Type.String(),
  connected: Type.Literal(true),
  connectedAt: Timestamp,
  webhook: WebhookStatus,
});
