import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Envelope, ErrorEnvelope, Message, WebsiteParams, ok, withErrors } from '../../http/schemas.ts';
import { accountCallerOf, websiteOf } from '../../http/request-context.ts';
import { CreateWebsiteBody, UpdateWebsiteBody, Website, WebsiteSummary } from './websites.schemas.ts';
import * as service from './websites.service.ts';

const tags = ['Websites'];

export const websitesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.db.kysely;

  app.get('/websites', {
    config: { access: { scope: 'account', permission: 'websites:read', apiKey: false } },
    schema: { tags, summary: 'List the websites available to the token', response: withErrors({ 200: Envelope(WebsiteSummary) }) },
    handler: async (request) => ok(await service.listWebsites(db, accountCallerOf(request))),
  });

  app.post('/websites', {
    config: { access: { scope: 'account', permission: 'websites:write', apiKey: false } },
    schema: { tags, summary: 'Create a website', body: CreateWebsiteBody, response: withErrors({ 200: Envelope(Website), 409: ErrorEnvelope }) },
    handler: async (request) => ok([await service.createWebsite(db, accountCallerOf(request), request.body)]),
  });

  app.get('/websites/:websiteId', {
    config: { access: { scope: 'website', permission: 'settings:read', action: 'read', apiKey: true } },
    schema: { tags, summary: 'Get website settings', params: WebsiteParams, response: withErrors({ 200: Envelope(Website) }) },
    handler: async (request) => ok([await service.getWebsite(db, websiteOf(request))]),
  });

  app.put('/websites/:websiteId', {
    config: { access: { scope: 'website', permission: 'settings:write', action: 'manage', apiKey: true } },
    schema: {
      tags,
      summary: 'Update website settings (only the fields sent change; null clears)',
      params: WebsiteParams,
      body: UpdateWebsiteBody,
      response: withErrors({ 200: Envelope(Website), 409: ErrorEnvelope }),
    },
    handler: async (request) => {
      const website = await service.updateWebsite(db, websiteOf(request), request.body);
      // A new zone's move of the day rollups (recorded with the update) starts now, in the background.
      if (request.body.timezone !== undefined && request.body.timezone !== null) app.derivedDataWorker.wake();
      return ok([website]);
    },
  });

  app.delete('/websites/:websiteId', {
    config: { access: { scope: 'website', permission: 'websites:write', action: 'read', apiKey: false } },
    schema: {
      tags,
      summary: 'Always refused: websites are deleted in the dashboard only',
      params: WebsiteParams,
      response: withErrors({ 200: Envelope(Message) }),
    },
    handler: async () => service.refuseWebsiteDeletion(),
  });
};
