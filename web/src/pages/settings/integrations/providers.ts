// The payment providers the Integrations section offers, as their owners know them, and the
// status the server answers for each (GET /api/v1/admin/websites/{id}/integrations).

/** The check of an API provider's credential with the provider (a background job). */
export interface AccountState {
  status: 'verifying' | 'verified' | 'failed';
  name: string | null;
  currency: string | null;
  error: string | null;
  verifiedAt: string | null;
}

/** The import of the last 365 days of an API provider's payments, on connect and on a re-sync. */
export interface HistoryState {
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  requestedAt: string;
  finishedAt: string | null;
  error: string | null;
  pages: number;
  paymentsImported: number;
  attempts: number;
}

/** Where the provider sends its webhooks, and what has arrived there. */
export interface WebhookState {
  url: string;
  secretSet: boolean;
  secretSetAt: string | null;
  lastEventAt: string | null;
  lastEventType: string | null;
  eventsReceived: number;
}

export interface ProviderStatus {
  connected: boolean;
  connectedAt: string | null;
  /** Absent from a server older than the webhook receiver. */
  webhook?: WebhookState;
  /** API providers only: null while not connected. */
  account?: AccountState | null;
  history?: HistoryState | null;
}

/** The whole answer: each provider's status under both its names, and the website's currency. */
export type Statuses = Record<string, unknown>;

/** A provider's status in the answer (undefined when the server does not list it). */
export function statusOf(statuses: Statuses, id: string): ProviderStatus | undefined {
  const status = statuses[id];
  return typeof status === 'object' && status !== null ? (status as ProviderStatus) : undefined;
}

export interface CredentialField {
  /** The connect body's field (Sightline's name). */
  name: string;
  /** What the provider calls it. */
  label: string;
  hint?: string;
  /** A secret (typed hidden); an id is typed in the clear. */
  secret: boolean;
}

export interface ProviderInfo {
  /** Sightline's API name: the routes' path segment. */
  id: string;
  /** The name people know it by. */
  name: string;
  /** What connecting it does, in one line. */
  about: string;
  /** The API credential's fields; none for the providers connected by their webhook alone. */
  fields: CredentialField[];
  webhook: {
    /** Where, in the provider's own dashboard, the webhook is added. */
    where: string;
    /** The event types (or topics) to subscribe to. */
    events: string[];
    /** Where the signing secret is found. */
    secret: string;
  };
}

const API_ABOUT = 'Connecting checks the key, imports the last 365 days of payments, and records new payments by webhook.';

export const PROVIDERS: ProviderInfo[] = [
  {
    id: 'provider-one',
    name: 'Stripe',
    about: API_ABOUT,
    fields: [
      {
        name: 'providerOneRestrictedKey',
        label: 'Restricted key (rk_...)',
        hint: 'A restricted key that can read the account, Checkout Sessions and invoices.',
        secret: true,
      },
    ],
    webhook: {
      where: 'In Stripe Workbench, Webhooks → Create new destination (snapshot payloads), with this URL, for the events',
      events: ['checkout.session.completed', 'checkout.session.async_payment_succeeded', 'invoice.paid', 'charge.refunded'],
      secret: "Then paste the destination's signing secret (whsec_..., Reveal secret).",
    },
  },
  {
    id: 'provider-two',
    name: 'Lemon Squeezy',
    about: API_ABOUT,
    fields: [
      { name: 'providerTwoApiKey', label: 'API key', secret: true },
      { name: 'providerTwoStoreId', label: 'Store id', secret: false },
    ],
    webhook: {
      where: 'In Lemon Squeezy, Settings → Webhooks: add a webhook with this URL, a signing secret you choose (6 to 40 characters), for the events',
      events: ['order_created', 'order_refunded', 'subscription_payment_success', 'subscription_payment_refunded'],
      secret: 'Then paste the same secret here.',
    },
  },
  {
    id: 'provider-three',
    name: 'Polar',
    about: API_ABOUT,
    fields: [
      { name: 'providerThreeAccessToken', label: 'Organization access token', secret: true },
      { name: 'providerThreeOrgId', label: 'Organization id', secret: false },
    ],
    webhook: {
      where: "In Polar, the organization's settings, Webhooks → Add Endpoint: this URL, format Raw, for the events",
      events: ['order.paid', 'order.refunded'],
      secret: 'Then paste its secret exactly as Polar shows it.',
    },
  },
  {
    id: 'provider-four',
    name: 'Paddle',
    about: API_ABOUT,
    fields: [{ name: 'providerFourApiKey', label: 'API key', secret: true }],
    webhook: {
      where: 'In Paddle, Developer tools → Notifications → New destination: type webhook, this URL, for the events',
      events: ['transaction.completed', 'adjustment.created', 'adjustment.updated'],
      secret: "Then paste the destination's secret key (pdl_ntfset_..., under Edit destination).",
    },
  },
  {
    id: 'provider-five',
    name: 'Shopify',
    about: 'Payments arrive by webhook only: saving the signing secret connects the store.',
    fields: [],
    webhook: {
      where: 'In the Shopify admin, Settings → Notifications → Webhooks: create a webhook (format JSON, this URL) for each of the topics',
      events: ['orders/paid', 'refunds/create'],
      secret: 'Then paste the key that section says the webhooks are signed with.',
    },
  },
  {
    id: 'provider-six',
    name: 'WooCommerce',
    about: 'Payments arrive by webhook only: saving the signing secret connects the shop.',
    fields: [],
    webhook: {
      where: 'In WordPress, WooCommerce → Settings → Advanced → Webhooks: add two active webhooks, with this URL, the secret saved here and the API version left at its default, for the topics',
      events: ['Order created', 'Order updated'],
      secret: 'Save a secret of letters and digits of your choosing here first: that connects the shop, so their first deliveries are accepted.',
    },
  },
];

/** "Stripe (provider-one)": the name people know, with the API's name beside it. */
export function titleOf(provider: ProviderInfo): string {
  return `${provider.name} (${provider.id})`;
}

/** A provider connected with an API credential (checked, and its history imported). */
export function hasApi(provider: ProviderInfo): boolean {
  return provider.fields.length > 0;
}

/** Whether a status is still moving (the check or the import has not finished): worth asking again. */
export function isPending(status: ProviderStatus | undefined): boolean {
  if (!status?.connected) return false;
  return status.account?.status === 'verifying' || status.history?.status === 'queued' || status.history?.status === 'running';
}
