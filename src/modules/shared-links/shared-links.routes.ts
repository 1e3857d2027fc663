import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { EmptyBody, Envelope, WebsiteParams, ok, withErrors } from '../../http/schemas.ts';
import { websiteOf } from '../../http/request-context.ts';
import type { WebsiteScopedAccess } from '../../plugins/route-access.ts';
import { CreateSharedLinkBody, Revoked, SharedLink, SharedLinkParams, SharedLinkWithSecret, UpdateSharedLinkBody } from './shared-links.schemas.ts';
import * as service from './shared-links.service.ts';

// Managing a website's shared dashboards: settings:read to list, settings:write (owner or member,
// as for every other setting) to create, rename, protect and revoke. A df_ key has member rights
// on its own website, as on the website settings.

const tags = ['Shared dashboards'];
const reading: { access: WebsiteScopedAccess } = { access: { scope: 'website', permission: 'settings:read', action: 'read', apiKey: true } };
const managing: { access: WebsiteScopedAccess } = { access: { scope: 'website', permission: 'settings:write', action: 'manage', apiKey: true } };

export const sharedLinksRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.db.kysely;

  app.get('/websites/:websiteId/shared-links', {
    config: reading,
    schema: { tags, summary: "List the website's shared dashboard links (masked)", params: WebsiteParams, response: withErrors({ 200: Envelope(SharedLink) }) },
    handler: async (request) => ok(await service.listSharedLinks(db, websiteOf(request).websiteId)),
  });

  app.post('/websites/:websiteId/shared-links', {
    config: managing,
    schema: {
      tags,
      summary: 'Create a shared dashboard link, optionally with a password; its URL is returned in this response only',
      params: WebsiteParams,
      body: CreateSharedLinkBody,
      response: withErrors({ 200: Envelope(SharedLinkWithSecret) }),
    },
    handler: async (request) => ok([await service.createSharedLink(db, websiteOf(request).websiteId, request.body, app.config.publicUrl)]),
  });

  app.put('/websites/:websiteId/shared-links/:sharedLinkId', {
    config: managing,
    schema: {
      tags,
      summary: 'Rename a shared link, or set or clear (null) its password; a new password ends earlier unlocks',
      params: SharedLinkParams,
      body: UpdateSharedLinkBody,
      response: withErrors({ 200: Envelope(SharedLink) }),
    },
    handler: async (request) => ok([await service.updateSharedLink(db, websiteOf(request).websiteId, request.params.sharedLinkId, request.body)]),
  });

  app.delete('/websites/:websiteId/shared-links/:sharedLinkId', {
    config: managing,
    schema: { tags, summary: 'Revoke a shared link: its URL stops working at once', params: SharedLinkParams, body: EmptyBody, response: withErrors({ 200: Envelope(Revoked) }) },
    handler: async (request) => ok([await service.revokeSharedLink(db, websiteOf(request).websiteId, request.params.sharedLinkId)]),
  });
};
