import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { EmptyBody, Envelope, ok, withErrors } from '../../http/schemas.ts';
import { websiteOf } from '../../http/request-context.ts';
import { DeleteGoalsQuery, DeletePaymentsQuery, GoalsDeleted, PaymentsDeleted } from './server-deletes.schemas.ts';
import * as deletes from './server-deletes.service.ts';
import { GoalRecorded, PaymentBody, PaymentRecorded, ServerGoalBody, WebsiteIdQuery } from './server-events.schemas.ts';
import * as service from './server-events.service.ts';

const tags = ['Website API'];

/**
 * Server-side goals and payments, and deleting them: a df_ key (its own website) or an account
 * token with ?websiteId=.
 */
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
    handler: async (request) => ok([await service.recordServerGoal(db, app.events, app.eventLog, websiteOf(request).websiteId, request.body)]),
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
    // Counted by the fold, never waiting for one (issue 38): on ClickHouse (no rollups) under the website's lock.
    handler: async (request) => service.recordPayment(db, websiteOf(request).websiteId, request.body, null, app.rollups),
  });

  app.delete('/api/v1/goals', {
    config: { access: { scope: 'website', permission: 'goals:write', action: 'manage', apiKey: true, websiteIdIn: 'query' } },
    schema: {
      tags,
      summary: 'Delete the server-recorded goal completions that match the filters (at least one); browser goals are kept',
      description:
        "Filters: datafast_visitor_id, name (or goalName), startAt and endAt (or start and end; YYYY-MM-DD days in the website's " +
        'time zone, both included, or ISO-8601 instants). Tracked goals and the time series count what is left. The answer ' +
        'names the filters applied: datafast_visitor_id, goal_name (normalised) and timeRange {start, end} (the first and last ' +
        'included instant, UTC), each only when used.',
      querystring: DeleteGoalsQuery,
      body: EmptyBody,
      response: withErrors({ 200: Envelope(GoalsDeleted) }),
    },
    handler: async (request) => ok([await deletes.deleteServerGoals(db, app.eventLog, websiteOf(request).websiteId, request.query)]),
  });

  app.delete('/api/v1/payments', {
    config: { access: { scope: 'website', permission: 'payments:write', action: 'manage', apiKey: true, websiteIdIn: 'query' } },
    schema: {
      tags,
      summary: 'Delete the payments that match the filters (at least one)',
      description:
        "Filters: transaction_id (or tx_id), datafast_visitor_id, startAt and endAt (or start and end; YYYY-MM-DD days in the " +
        "website's time zone, both included, or ISO-8601 instants, compared with the payment time); they combine. The answer " +
        'names the filters applied: transaction_id, datafast_visitor_id and timeRange {start, end} (the first and last included ' +
        'instant, UTC), each only when used.',
      querystring: DeletePaymentsQuery,
      body: EmptyBody,
      response: withErrors({ 200: Envelope(PaymentsDeleted) }),
    },
    handler: async (request) => ok([await deletes.deletePayments(db, websiteOf(request).websiteId, request.query)]),
  });
};
