import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Envelope, WebsiteParams, ok, withErrors } from '../../http/schemas.ts';
import { accountCallerOf, websiteOf } from '../../http/request-context.ts';
import { MailSubscription, MailSubscriptionBody } from './mail-subscriptions.schemas.ts';
import * as service from './mail-subscriptions.service.ts';

// Not in admin-api.md (issue 37 item 4): each member's own reports by mail on a website (weekly,
// monthly, traffic-spike alerts). Any member may read and change their own, a viewer included:
// it is their mailbox, not the website's settings (those are sendWeeklyReports and
// sendViralTrafficAlerts on PUT /websites/{websiteId}).

const tags = ['Reports by mail'];
const access = { scope: 'website', permission: 'analytics:read', action: 'read', apiKey: false } as const;
const path = '/websites/:websiteId/mail-reports';

export const mailSubscriptionsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.db.kysely;

  app.get(path, {
    config: { access },
    schema: {
      tags,
      summary: "Your own reports by mail on the website, and the website's switches",
      params: WebsiteParams,
      response: withErrors({ 200: Envelope(MailSubscription) }),
    },
    handler: async (request) => ok([await service.getSubscription(db, websiteOf(request).websiteId, accountCallerOf(request).accountId)]),
  });

  app.put(path, {
    config: { access },
    schema: {
      tags,
      summary: 'Choose which reports by mail you take for the website (only the fields given change)',
      params: WebsiteParams,
      body: MailSubscriptionBody,
      response: withErrors({ 200: Envelope(MailSubscription) }),
    },
    handler: async (request) =>
      ok([await service.updateSubscription(db, websiteOf(request).websiteId, accountCallerOf(request).accountId, request.body)]),
  });
};
