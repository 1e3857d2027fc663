import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { EmptyBody, Envelope, WebsiteParams, ok, withErrors } from '../../http/schemas.ts';
import { websiteOf } from '../../http/request-context.ts';
import { Connected, Disconnected, IntegrationStatus, ResyncQueued, connectBody } from './integrations.schemas.ts';
import * as service from './integrations.service.ts';
import { acceptHostedFieldNames } from './credential-names.ts';
import { CONNECT_FIELDS, HOSTED_NAMES, PROVIDERS, RESYNC_PROVIDER, hostedFieldName, isApiProvider } from './providers.ts';
import { SigningSecretBody, WebhookSecretSet } from './webhooks.schemas.ts';
import { setWebhookSecret } from './webhooks.service.ts';

const tags = ['Integrations'];
const read = { scope: 'website', permission: 'settings:read', action: 'read', apiKey: true } as const;
const write = { scope: 'website', permission: 'settings:write', action: 'manage', apiKey: true } as const;
const base = '/websites/:websiteId/integrations';

export const integrationsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.db.kysely;
  const { publicUrl } = app.config;

  app.get(base, {
    config: { access: read },
    schema: {
      tags,
      summary: "Connection status per provider, under Sightline's names and the hosted service's (stripe, ...), with the website's currency; credentials are never returned",
      params: WebsiteParams,
      response: withErrors({ 200: Envelope(IntegrationStatus) }),
    },
    handler: async (request) => ok([await service.getStatus(db, websiteOf(request).websiteId, publicUrl)]),
  });

  // Each provider's routes, at its own path and at the hosted service's name for it (stripe, ...):
  // one definition, registered twice; the alias is left out of the document, which names the
  // seed paths (website-api.md section 7).
  for (const provider of PROVIDERS) {
    const hostedName = HOSTED_NAMES[provider];
    for (const name of [provider, hostedName]) {
      const atHostedPath = name === hostedName;
      const alias = atHostedPath ? { hide: true } : {};
      const url = `${base}/${name}`;
      const fields = CONNECT_FIELDS[provider];
      if (fields) {
        app.post(url, {
          config: { access: write },
          preValidation: acceptHostedFieldNames(provider, atHostedPath),
          schema: {
            ...alias,
            tags,
            summary:
              `Connect ${provider} (${fields.join(', ')}); connecting again replaces the credentials. ` +
              `Also at /integrations/${hostedName}, and with ${fields.map(hostedFieldName).join(', ')}`,
            params: WebsiteParams,
            body: connectBody(provider),
            response: withErrors({ 200: Envelope(Connected) }),
          },
          handler: async (request) => {
            const connected = await service.connect(db, app.keyring, websiteOf(request).websiteId, provider, request.body as Record<string, string>);
            app.integrationJobs?.wake(); // the credential's check and history import, after the answer
            return ok([connected]);
          },
        });
      }
      app.delete(url, {
        config: { access: write },
        schema: {
          ...alias,
          tags,
          summary: `Disconnect ${provider} (idempotent); also at /integrations/${hostedName}`,
          params: WebsiteParams,
          body: EmptyBody,
          response: withErrors({ 200: Envelope(Disconnected) }),
        },
        handler: async (request) => ok([await service.disconnect(db, websiteOf(request).websiteId, provider)]),
      });
      // Not in admin-api.md (issue 34): the webhook's signing secret, which is how Shopify and
      // WooCommerce connect, and a re-sync for every API provider (the dashboard's button).
      app.put(`${url}/webhook`, {
        config: { access: write },
        schema: {
          ...alias,
          tags,
          summary:
            `Store the signing secret of ${provider}'s webhook (write-only)` +
            (isApiProvider(provider) ? '; the provider must be connected first' : `; this connects ${provider}`) +
            `. Also at /integrations/${hostedName}/webhook`,
          params: WebsiteParams,
          body: SigningSecretBody,
          response: withErrors({ 200: Envelope(WebhookSecretSet) }),
        },
        handler: async (request) => {
          const { websiteId } = websiteOf(request);
          const { created } = await setWebhookSecret(db, app.keyring, websiteId, provider, request.body.signingSecret);
          const status = (await service.getStatus(db, websiteId, publicUrl))[provider];
          const message = created ? `${provider} connected by its webhook` : `${provider} webhook signing secret stored`;
          return ok([{ message, provider, connected: true as const, connectedAt: status.connectedAt!, webhook: status.webhook }]);
        },
      });
      /** The check of the credential and the history import, queued: one job per connection. */
      const resync = async (request: FastifyRequest) => {
        const queued = await service.queueResync(db, websiteOf(request).websiteId, provider);
        app.integrationJobs?.wake();
        return ok([queued]);
      };
      if (isApiProvider(provider)) {
        app.post(`${url}/resync`, {
          config: { access: write },
          schema: {
            ...alias,
            tags,
            summary: `Queue a new check of ${provider}'s credential and import of its last 365 days of payments; also at /integrations/${hostedName}/resync`,
            params: WebsiteParams,
            body: EmptyBody,
            response: withErrors({ 200: Envelope(ResyncQueued) }),
          },
          handler: resync,
        });
      }
      if (provider === RESYNC_PROVIDER) {
        app.patch(url, {
          config: { access: write },
          schema: {
            ...alias,
            tags,
            summary: `Queue a re-sync of historical payments from ${RESYNC_PROVIDER}; also at /integrations/${hostedName}`,
            params: WebsiteParams,
            body: EmptyBody,
            response: withErrors({ 200: Envelope(ResyncQueued) }),
          },
          handler: resync,
        });
      }
    }
  }
};
