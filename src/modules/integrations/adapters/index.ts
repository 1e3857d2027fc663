import type { Provider } from '../providers.ts';
import type { AdapterOptions, ApiAdapter, ProviderAdapter } from './adapter.ts';
import { lemonSqueezyAdapter } from './lemon-squeezy.ts';
import { paddleAdapter } from './paddle.ts';
import { polarAdapter } from './polar.ts';
import { shopifyAdapter } from './shopify.ts';
import { stripeAdapter } from './stripe.ts';
import { wooCommerceAdapter } from './woocommerce.ts';

export * from './adapter.ts';

/** Each provider's API root, for pointing it elsewhere (tests, a provider's sandbox). */
export type AdapterBaseUrls = Partial<Record<Provider, string>>;

/** The adapter of every provider, keyed as providers.ts names them. */
export function createAdapters(baseUrls: AdapterBaseUrls = {}): Readonly<Record<Provider, ProviderAdapter>> {
  const options = (provider: Provider): AdapterOptions => (baseUrls[provider] ? { baseUrl: baseUrls[provider] } : {});
  return {
    'provider-one': stripeAdapter(options('provider-one')),
    'provider-two': lemonSqueezyAdapter(options('provider-two')),
    'provider-three': polarAdapter(options('provider-three')),
    'provider-four': paddleAdapter(options('provider-four')),
    'provider-five': shopifyAdapter(),
    'provider-six': wooCommerceAdapter(),
  };
}

export function hasApi(adapter: ProviderAdapter): adapter is ApiAdapter {
  return adapter.connection === 'api-credential';
}
