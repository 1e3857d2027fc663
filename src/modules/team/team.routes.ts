import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Envelope, ErrorEnvelope, WebsiteParams, ok, withErrors } from '../../http/schemas.ts';
import { accountCallerOf, websiteOf } from '../../http/request-context.ts';
import { linkMailSettings } from '../dashboard/dashboard-mail.ts';
import { InviteBody, Invited, PendingInvitation, RemoveBody, Removed, TeamMember } from './team.schemas.ts';
import * as service from './team.service.ts';

const tags = ['Team'];

export const teamRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.db.kysely;

  app.get('/websites/:websiteId/team', {
    config: { access: { scope: 'website', permission: 'team:read', action: 'read', apiKey: true } },
    schema: {
      tags,
      summary: 'List the team (the owner included) and pending invitations',
      params: WebsiteParams,
      response: withErrors({ 200: Envelope(TeamMember, { invitations: Type.Array(PendingInvitation) }) }),
    },
    handler: async (request) => {
      const { members, invitations } = await service.listTeam(db, websiteOf(request).websiteId);
      return { ...ok(members), invitations };
    },
  });

  app.post('/websites/:websiteId/team', {
    config: { access: { scope: 'website', permission: 'team:write', action: 'manageTeam', apiKey: false } },
    schema: {
      tags,
      summary: 'Invite someone by e-mail (owner only): they are mailed a link to accept; role viewer (default) or member',
      params: WebsiteParams,
      body: InviteBody,
      response: withErrors({ 200: Envelope(Invited), 409: ErrorEnvelope }),
    },
    handler: async (request) => {
      const invited = await service.invite(db, websiteOf(request).websiteId, accountCallerOf(request).accountId, request.body, linkMailSettings(app));
      app.mailOutbox?.poke();
      return ok([invited]);
    },
  });

  app.delete('/websites/:websiteId/team', {
    config: { access: { scope: 'website', permission: 'team:write', action: 'manageTeam', apiKey: false } },
    schema: {
      tags,
      summary: 'Remove a member or withdraw a pending invitation (owner only); body {userId} or {email}',
      params: WebsiteParams,
      body: RemoveBody,
      response: withErrors({ 200: Envelope(Removed) }),
    },
    handler: async (request) => ok([await service.remove(db, websiteOf(request).websiteId, request.body)]),
  });
};
