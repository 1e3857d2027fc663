import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Envelope, Message, WebsiteParams, ok, withErrors } from '../../http/schemas.ts';
import { RECENT_SIGN_IN_MS } from '../../auth/sessions.ts';
import { sessionOf, websiteOf } from '../../http/request-context.ts';
import { DeleteWebsiteBody } from './dashboard.schemas.ts';
import { deleteWebsiteFromDashboard } from './website-deletion.service.ts';

const tags = ['Dashboard'];

export const websiteDeletionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.db.kysely;

  app.delete('/websites/:websiteId', {
    // Never a token: deleting everything a website holds takes the owner, in person, with the password just entered.
    config: { access: { scope: 'website', permission: 'websites:write', action: 'delete', apiKey: false, sessionOnly: true } },
    schema: {
      tags,
      summary: `Delete a website and everything it holds (owner only, signed in within the last ${RECENT_SIGN_IN_MS / 60_000} minutes, the domain typed again)`,
      params: WebsiteParams,
      body: DeleteWebsiteBody,
      response: withErrors({ 200: Envelope(Message) }),
    },
    handler: async (request) =>
      ok([await deleteWebsiteFromDashboard(db, app.eventLog, sessionOf(request), websiteOf(request).websiteId, request.body.confirmDomain)]),
  });
};
