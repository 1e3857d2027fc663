import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Envelope, ErrorEnvelope, ok, withErrors } from '../../http/schemas.ts';
import { AcceptInvitationLinkBody, InvitationLink, InvitationLinkParams, SessionInfo } from './dashboard.schemas.ts';
import * as service from './invitation-links.service.ts';
import { setSessionCookie } from './session-cookie.ts';
import { signInThrottles } from './sign-in-throttle.ts';

const tags = ['Dashboard'];

export const invitationLinksRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.db.kysely;
  const throttle = signInThrottles(app);

  app.get('/invitations/:token', {
    config: { access: { public: true } },
    schema: {
      tags,
      summary: "The invitation a mailed link's token names: the invited address, the website, the role, and whether the address has an account",
      params: InvitationLinkParams,
      response: withErrors({ 200: Envelope(InvitationLink) }),
    },
    handler: async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return ok([await service.describeInvitationLink(db, request.params.token)]);
    },
  });

  app.post('/invitations/accept', {
    config: { access: { public: true } },
    preHandler: [throttle.perAddress],
    schema: {
      tags,
      summary: "Accept a mailed invitation: with the invited address's password, or a name and password for a new account; signs in (throttled)",
      body: AcceptInvitationLinkBody,
      response: withErrors({ 200: Envelope(SessionInfo), 409: ErrorEnvelope }),
    },
    handler: async (request, reply) => {
      const started = await service.acceptInvitationLink(db, request.body, request.headers['user-agent']);
      setSessionCookie(app, reply, started.secret);
      return ok([started.info]);
    },
  });
};
