import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ErrorEnvelope } from '../../http/schemas.ts';
import { createAdapters } from './adapters/index.ts';
import { HOSTED_NAMES, PROVIDERS, type Provider } from './providers.ts';
import { WEBHOOK_BODY_LIMIT, WebhookBody, WebhookParams, WebhookReceived } from './webhooks.schemas.ts';
import { receiveWebhook } from './webhooks.service.ts';

// The payment providers' webhook receiver: public (a provider holds no Sightline credential; the
// signature with the secret the owner pasted is the proof), one route for the six providers under
// either name. Everything here stays inside this plugin: the body is kept as the raw bytes
// whatever its content type, since every provider signs the bytes it sent.

const BY_NAME = new Map<string, Provider>(PROVIDERS.flatMap((provider) => [[provider, provider] as const, [HOSTED_NAMES[provider], provider] as const]));

export const webhooksRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const adapters = createAdapters(app.config.providerApiUrls);
  const deps = { db: app.db.kysely, keyring: app.keyring, adapterOf: (provider: Provider) => adapters[provider], paymentFold: app.rollups };

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT }, (_request, body, done) => done(null, body));

  app.post('/api/webhooks/:provider/:websiteId', {
    config: { access: { public: true } },
    bodyLimit: WEBHOOK_BODY_LIMIT,
    schema: {
      tags: ['Integrations'],
      summary: "Receive a payment provider's webhook: payments, renewals and refunds, verified with the provider's signature scheme",
      description:
        'Paste this address (GET .../integrations shows it as `webhook.url`) into the provider, and its signing secret into ' +
        '`PUT /api/v1/admin/websites/{websiteId}/integrations/{provider}/webhook`. 400: the signature does not verify with that ' +
        'secret (nothing is stored). 410: the provider is not connected to the website, or has no secret. The same event ' +
        'delivered twice is recorded once. WooCommerce\'s unsigned ping (`webhook_id=<id>`) answers 200 and stores nothing.',
      params: WebhookParams,
      body: WebhookBody,
      // No credential, so never 401 or 403.
      response: { 200: WebhookReceived, 400: ErrorEnvelope, 410: ErrorEnvelope, 413: ErrorEnvelope, 429: ErrorEnvelope, 503: ErrorEnvelope },
    },
    handler: async (request) => {
      const provider = BY_NAME.get(request.params.provider)!;
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      try {
        const receipt = await receiveWebhook(deps, provider, request.params.websiteId, body, request.headers);
        app.metrics.integrationWebhooks.inc({ provider, outcome: receipt.outcome });
        const { outcome: _outcome, ...answer } = receipt;
        return answer;
      } catch (error) {
        const status = (error as { statusCode?: number }).statusCode;
        if (status === 400) app.metrics.integrationWebhooks.inc({ provider, outcome: 'bad_signature' });
        if (status === 410) app.metrics.integrationWebhooks.inc({ provider, outcome: 'not_connected' });
        throw error;
      }
    },
  });
};
