import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { EmptyBody, Envelope, ErrorEnvelope, Message, WebsiteParams, ok, withErrors } from '../../http/schemas.ts';
import { websiteOf } from '../../http/request-context.ts';
import { CreateFunnelBody, Funnel, FunnelParams, UpdateFunnelBody } from './funnels.schemas.ts';
import * as service from './funnels.service.ts';

const tags = ['Funnels'];

export const funnelsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.db.kysely;

  app.get('/websites/:websiteId/funnels', {
    config: { access: { scope: 'website', permission: 'funnels:read', action: 'read', apiKey: true } },
    schema: { tags, summary: "List the website's active funnels, oldest first", params: WebsiteParams, response: withErrors({ 200: Envelope(Funnel) }) },
    handler: async (request) => ok(await service.listFunnels(db, websiteOf(request).websiteId)),
  });

  app.post('/websites/:websiteId/funnels', {
    config: { access: { scope: 'website', permission: 'funnels:write', action: 'manage', apiKey: true } },
    schema: {
      tags,
      summary: 'Create a funnel of 2 to 8 steps (pageview steps need url, goal steps need goalName)',
      params: WebsiteParams,
      body: CreateFunnelBody,
      response: withErrors({ 200: Envelope(Funnel), 409: ErrorEnvelope }),
    },
    handler: async (request) => {
      const created = await service.createFunnel(db, websiteOf(request).websiteId, request.body);
      // The funnel's build, if it needs one (funnels.service.ts), runs now rather than at the worker's next look.
      app.derivedDataWorker.wake();
      return ok([created]);
    },
  });

  app.put('/websites/:websiteId/funnels/:funnelId', {
    config: { access: { scope: 'website', permission: 'funnels:write', action: 'manage', apiKey: true } },
    schema: {
      tags,
      summary: 'Update a funnel (only the fields sent change; steps are replaced whole; isActive: true revives a deleted one)',
      params: FunnelParams,
      body: UpdateFunnelBody,
      response: withErrors({ 200: Envelope(Funnel), 409: ErrorEnvelope }),
    },
    handler: async (request) => {
      const updated = await service.updateFunnel(db, websiteOf(request).websiteId, request.params.funnelId, request.body);
      app.derivedDataWorker.wake();
      return ok([updated]);
    },
  });

  app.delete('/websites/:websiteId/funnels/:funnelId', {
    config: { access: { scope: 'website', permission: 'funnels:write', action: 'manage', apiKey: true } },
    schema: { tags, summary: 'Soft-delete a funnel (isActive becomes false)', params: FunnelParams, body: EmptyBody, response: withErrors({ 200: Envelope(Message) }) },
    handler: async (request) => ok([await service.deleteFunnel(db, websiteOf(request).websiteId, request.params.funnelId)]),
  });
};
