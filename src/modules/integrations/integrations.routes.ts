import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { EmptyBody, Envelope, WebsiteParams, ok, withErrors } from '../../http/schemas.ts';
import { websiteOf } from '../../http/request-context.ts';
import { Connected, Disconnected, IntegrationStatus, ResyncQueued, connectBody } from './integrations.schemas.ts';
import * as service from './integrations.service.ts';
import { CONNECT_FIELDS, PROVIDERS, type Provider, RESYNC_PROVIDER } from './providers.ts';

const tags = ['Integrations'];
const read = { scope: 'website', permission: 'settings:read', action: 'read', apiKey: true } as const;
const write = { scope: 'website', permission: 'settings:write', action: 'manage', apiKey: true } as const;
const base = '/websites/:websiteId/integrations';

export const integrationsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.db.kysely;

  app.get(base, {
    config: { access: read },
    schema: {
      tags,
      summary: 'Connection status per provider; credentials are never returned',
      params: WebsiteParams,
      response: withErrors({ 200: Envelope(IntegrationStatus) }),
    },
    handler: async (request) => ok([await service.getStatus(db, websiteOf(request).websiteId)]),
  });

  for (const provider of PROVIDERS) {
    if (CONNECT_FIELDS[provider]) {
      app.post(`${base}/${provider}`, {
        config: { access: write },
        schema: {
          tags,
          summary: `Connect ${provider} (${CONNECT_FIELDS[provider]!.join(', ')}); connecting again replaces the credentials`,
          params: WebsiteParams,
          body: connectBody(provider),
          response: withErrors({ 200: Envelope(Connected) }),
        },
        handler: async (request) =>
          ok([await service.connect(db, app.keyring, websiteOf(request).websiteId, provider, request.body as Record<string, string>)]),
      });
    }
    app.delete(`${base}/${provider}`, {
      config: { access: write },
      schema: { tags, summary: `Disconnect ${provider} (idempotent)`, params: WebsiteParams, body: EmptyBody, response: withErrors({ 200: Envelope(Disconnected) }) },
      handler: async (request) => ok([await service.disconnect(db, websiteOf(request).websiteId, provider as Provider)]),
    });
  }

  app.patch(`${base}/${RESYNC_PROVIDER}`, {
    config: { access: write },
    schema: {
      tags,
      summary: `Queue a re-sync of historical payments from ${RESYNC_PROVIDER}`,
      params: WebsiteParams,
      body: EmptyBody,
      response: withErrors({ 200: Envelope(ResyncQueued) }),
    },
    handler: async (request) => ok([await service.queueResync(db, websiteOf(request).websiteId)]),
  });
};
