import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { EmptyBody, Envelope, ErrorEnvelope, ok, withErrors } from '../../http/schemas.ts';
import { accountCallerOf } from '../../http/request-context.ts';
import { Accepted, InvitationParams, MyInvitation } from './team.schemas.ts';
import * as service from './team.service.ts';

const tags = ['Invitations'];

export const invitationsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.db.kysely;

  app.get('/invitations', {
    config: { access: { scope: 'account', permission: 'websites:read', apiKey: false } },
    schema: { tags, summary: "The caller's pending invitations", response: withErrors({ 200: Envelope(MyInvitation) }) },
    handler: async (request) => ok(await service.listMyInvitations(db, accountCallerOf(request).accountId)),
  });

  app.post('/invitations/:invitationId/accept', {
    config: { access: { scope: 'account', permission: 'websites:write', apiKey: false } },
    schema: {
      tags,
      summary: 'Accept an invitation addressed to your e-mail; you join the website with the invited role',
      params: InvitationParams,
      body: EmptyBody,
      response: withErrors({ 200: Envelope(Accepted), 409: ErrorEnvelope }),
    },
    handler: async (request) => ok([await service.accept(db, accountCallerOf(request).accountId, request.params.invitationId)]),
  });
};
