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

/** Providers whose historical payments can be re-synced on request. */
export const RESYNC_PROVIDER: Provider = 'provider-four';
export const RESYNC_JOB = 'resync';
