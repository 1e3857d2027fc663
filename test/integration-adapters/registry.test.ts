import { describe, expect, it } from 'vitest';
import { createAdapters, hasApi, toPaymentInput } from '../../src/modules/integrations/adapters/index.ts';
import { scrub } from '../../src/modules/integrations/adapters/scrub.ts';
import { PROVIDERS } from '../../src/modules/integrations/providers.ts';

describe('the adapter registry', () => {
  it('has an adapter for every provider, and only providers five and six connect by webhook alone', () => {
    const adapters = createAdapters();
    expect(Object.keys(adapters).sort()).toEqual([...PROVIDERS].sort());
    for (const provider of PROVIDERS) expect(adapters[provider].provider).toBe(provider);
    expect(PROVIDERS.filter((provider) => !hasApi(adapters[provider]))).toEqual(['provider-five', 'provider-six']);
  });

  it('turns a provider payment into the payment writer input', () => {
    const input = toPaymentInput({
      transactionId: 't1',
      amount: 0,
      currency: 'USD',
      occurredAt: new Date('2026-01-02T03:04:05Z'),
      visitorId: null,
      sessionId: 's',
      email: null,
      customerId: null,
      customerName: null,
      renewal: false,
      refunded: false,
      isFreeTrial: true,
    });
    expect(input).toEqual({
      amount: 0,
      currency: 'USD',
      transaction_id: 't1',
      datafast_visitor_id: null,
      email: null,
      customer_id: null,
      customer_name: null,
      renewal: false,
      refunded: false,
      is_free_trial: true,
      timestamp: '2026-01-02T03:04:05.000Z',
    });
  });

  it('scrubs a credential and the key shapes providers echo back', () => {
    const credentials = { a: 'my-store-secret-value', b: '12' };
    expect(scrub('bad my-store-secret-value and rk_live_****1234 and pdl_live_apikey_01abc_def', credentials)).toBe('bad [redacted] and [redacted] and [redacted]');
    expect(scrub('store 12 not found', credentials)).toBe('store 12 not found'); // too short to be a secret
  });
});
