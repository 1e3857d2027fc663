// The six providers of admin-api.md, by position, with the credential fields each one's connect
// endpoint takes. Providers five and six have no connect endpoint in this interface.

export const PROVIDERS = ['provider-one', 'provider-two', 'provider-three', 'provider-four', 'provider-five', 'provider-six'] as const;
export type Provider = (typeof PROVIDERS)[number];

export const CONNECT_FIELDS: Partial<Record<Provider, readonly string[]>> = {
  'provider-one': ['providerOneRestrictedKey'],
  'provider-two': ['providerTwoApiKey', 'providerTwoStoreId'],
  'provider-three': ['providerThreeAccessToken', 'providerThreeOrgId'],
  'provider-four': ['providerFourApiKey'],
};

/** The providers connected with an API credential: checked, and their payment history imported, by a job. */
export const API_PROVIDERS = ['provider-one', 'provider-two', 'provider-three', 'provider-four'] as const satisfies readonly Provider[];
export type ApiProvider = (typeof API_PROVIDERS)[number];

export const isApiProvider = (provider: string): provider is ApiProvider => (API_PROVIDERS as readonly string[]).includes(provider);

/** The provider whose re-sync this interface offers on request (PATCH); the others' run on connect. */
export const RESYNC_PROVIDER: Provider = 'provider-four';
/**
 * The one job kind of the API providers: check the credential, then import the payment history
 * (queued on connect and on a re-sync). Stored as `resync`, the name its rows had before.
 */
export const RESYNC_JOB = 'resync';

// The hosted service's names (website-api.md section 7). Each provider's routes answer at its
// hosted name too, its status is listed under both names, and a connect body may name the
// credentials either way; what is stored always carries the names above.

export const HOSTED_NAMES: Readonly<Record<Provider, string>> = {
  'provider-one': 'stripe',
  'provider-two': 'lemonsqueezy',
  'provider-three': 'polar',
  'provider-four': 'paddle',
  'provider-five': 'shopify',
  'provider-six': 'woocommerce',
};

/** Each credential field of CONNECT_FIELDS, by the hosted service's name for it. */
const HOSTED_FIELD_NAMES: Readonly<Record<string, string>> = {
  providerOneRestrictedKey: 'stripeRak',
  providerTwoApiKey: 'lemonsqueezyApiKey',
  providerTwoStoreId: 'lemonsqueezyStoreId',
  providerThreeAccessToken: 'polarAccessToken',
  providerThreeOrgId: 'polarOrgId',
  providerFourApiKey: 'paddleApiKey',
};

export function hostedFieldName(field: string): string {
  const name = HOSTED_FIELD_NAMES[field];
  if (!name) throw new Error(`No hosted name for the credential field ${field}`);
  return name;
}

/** The address of the provider's webhook for a website: the hosted name reads better in the provider's settings. */
export function webhookUrl(publicUrl: string, websiteId: string, provider: Provider): string {
  return `${publicUrl}/api/webhooks/${HOSTED_NAMES[provider]}/${websiteId}`;
}
