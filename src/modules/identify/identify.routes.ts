import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { withErrors } from '../../http/schemas.ts';
import { websiteOf } from '../../http/request-context.ts';
import { IdentifiedEnvelope, IdentifyBody, IdentifyQuery } from './identify.schemas.ts';
import { identifyVisitor, readIdentity } from './identify.service.ts';

const tags = ['Website API'];

/** Who a visitor is: a df_ key (its own website) or an account token with ?websiteId=. */
export const identifyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.db.kysely;

  app.post('/api/v1/identify', {
    config: { access: { scope: 'website', permission: 'identify:write', action: 'manage', apiKey: true, websiteIdIn: 'query' } },
    schema: {
      tags,
      summary: "Attach a user profile to a visitor seen on the website (the latest identify replaces the visitor's profile)",
      querystring: IdentifyQuery,
      body: IdentifyBody,
      response: withErrors({ 200: IdentifiedEnvelope }),
    },
    handler: async (request) => {
      const { datafast_visitor_id: visitorId, ...identity } = request.body;
      const data = await identifyVisitor(db, app.eventLog, websiteOf(request).websiteId, visitorId, readIdentity(identity, 'body'));
      return { status: 'success' as const, data };
    },
  });
};
