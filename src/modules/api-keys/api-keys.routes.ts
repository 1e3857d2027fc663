import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { EmptyBody, Envelope, WebsiteParams, ok, withErrors } from '../../http/schemas.ts';
import { websiteOf } from '../../http/request-context.ts';
import { ApiKey, ApiKeyParams, ApiKeyWithSecret, CreateApiKeyBody, Deleted } from './api-keys.schemas.ts';
import * as service from './api-keys.service.ts';

const tags = ['Website API keys'];

export const apiKeysRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.db.kysely;

  app.get('/websites/:websiteId/apikeys', {
    config: { access: { scope: 'website', permission: 'api-keys:read', action: 'read', apiKey: true } },
    schema: { tags, summary: "List the website's API keys (masked)", params: WebsiteParams, response: withErrors({ 200: Envelope(ApiKey) }) },
    handler: async (request) => ok(await service.listApiKeys(db, websiteOf(request).websiteId)),
  });

  app.post('/websites/:websiteId/apikeys', {
    config: { access: { scope: 'website', permission: 'api-keys:write', action: 'manage', apiKey: true } },
    schema: {
      tags,
      summary: 'Create an API key; the raw df_ value is returned in this response only',
      params: WebsiteParams,
      body: CreateApiKeyBody,
      response: withErrors({ 200: Envelope(ApiKeyWithSecret) }),
    },
    handler: async (request) =>
      ok([await service.createApiKey(db, websiteOf(request).websiteId, request.body.name, app.config.limits.apiKeysPerWebsite)]),
  });

  app.put('/websites/:websiteId/apikeys/:apiKeyId', {
    config: { access: { scope: 'website', permission: 'api-keys:write', action: 'manage', apiKey: true } },
    schema: {
      tags,
      summary: 'Roll a key: same id and name, new secret returned once; the old secret stops working at once',
      params: ApiKeyParams,
      body: EmptyBody,
      response: withErrors({ 200: Envelope(ApiKeyWithSecret) }),
    },
    handler: async (request) => ok([await service.rollApiKey(db, websiteOf(request).websiteId, request.params.apiKeyId)]),
  });

  app.delete('/websites/:websiteId/apikeys/:apiKeyId', {
    config: { access: { scope: 'website', permission: 'api-keys:write', action: 'manage', apiKey: true } },
    schema: { tags, summary: 'Revoke a key', params: ApiKeyParams, body: EmptyBody, response: withErrors({ 200: Envelope(Deleted) }) },
    handler: async (request) => ok([await service.revokeApiKey(db, websiteOf(request).websiteId, request.params.apiKeyId)]),
  });
};
