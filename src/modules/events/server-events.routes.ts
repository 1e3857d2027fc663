import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Envelope, ok, withErrors } from '../../http/schemas.ts';
import { websiteOf } from '../../http/request-context.ts';
import { GoalRecorded, PaymentBody, PaymentRecorded, ServerGoalBody, WebsiteIdQuery } from './server-events.schemas.ts';
import * as service from './server-events.service.ts';

const tags = ['Website API'];

/** Server-side goals and payments: a df_ key (its own website) or an account token with ?websiteId=. */
export const serverEventsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.db.kysely;

  app.post('/api/v1/goals', {
    config: { access: { scope: 'website', permission: 'goals:write', action: 'manage', apiKey: true, websiteIdIn: 'query' } },
    schema: {
      tags,
      summary: 'Record a goal completed by a visitor who has a pageview on the website',
      querystring: WebsiteIdQuery,
      body: ServerGoalBody,
      response: withErrors({ 200: Envelope(GoalRecorded) }),
    },
    handler: async (request) => ok([await service.recordServerGoal(db, app.events, websiteOf(request).websiteId, request.body)]),
  });

  app.post('/api/v1/payments', {
    config: { access: { scope: 'website', permission: 'payments:write', action: 'manage', apiKey: true, websiteIdIn: 'query' } },
    schema: {
      tags,
      summary: 'Record a payment once per transaction_id (answers {message, transaction_id}, without the envelope)',
      querystring: WebsiteIdQuery,
      body: PaymentBody,
      response: withErrors({ 200: PaymentRecorded }),
    },
    handler: async (request) => service.recordPayment(db, websiteOf(request).websiteId, request.body),
  });
};
