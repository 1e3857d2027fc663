import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AppError } from '../../errors.ts';
import { ErrorEnvelope, withErrors } from '../../http/schemas.ts';
import type { RouteAccess } from '../../plugins/route-access.ts';

// Routes of the hosted service that Sightline does not offer (website-api.md sections 6 and 7):
// every method at each prefix and anywhere under it answers 501 in the envelope, never 404, so a
// client that reads 404 as "no such thing" is not misled. Each still declares what the hosted
// route needs, so a request without a credential is a 401 first, an unknown website a 404 and a
// missing permission a 403, as on every other route. None is in the OpenAPI document.

const BOT_TRAFFIC = 'Bot-traffic tracking';
const MENTIONS = 'Social mentions';

interface Access {
  /** For GET (and HEAD). */
  read: RouteAccess;
  /** For POST, PUT, PATCH and DELETE. */
  write: RouteAccess;
}

const analytics: Access = {
  read: { scope: 'account', permission: 'analytics:read', apiKey: true },
  write: { scope: 'account', permission: 'analytics:read', apiKey: true },
};
const websiteSettings: Access = {
  read: { scope: 'website', permission: 'settings:read', action: 'read', apiKey: true },
  write: { scope: 'website', permission: 'settings:write', action: 'manage', apiKey: true },
};
// Account-wide: the hosted service refuses a website's own key here.
const accountSettings: Access = {
  read: { scope: 'account', permission: 'settings:read', apiKey: false },
  write: { scope: 'account', permission: 'settings:write', apiKey: false },
};

/**
 * Each prefix with the feature it belongs to. The hosted docs list, for bot traffic:
 * GET /analytics/bot-traffic, GET /analytics/bot-traffic/pages, GET and PATCH
 * /admin/websites/{id}/bot-traffic/settings, GET, POST, PUT and DELETE
 * /admin/websites/{id}/bot-traffic/token, GET /admin/bot-traffic/usage.
 */
export const NOT_OFFERED: ReadonlyArray<{ prefix: string; feature: string; access: Access }> = [
  { prefix: '/api/v1/analytics/bot-traffic', feature: BOT_TRAFFIC, access: analytics },
  { prefix: '/api/v1/analytics/bots', feature: BOT_TRAFFIC, access: analytics },
  { prefix: '/api/v1/admin/websites/:websiteId/bot-traffic', feature: BOT_TRAFFIC, access: websiteSettings },
  { prefix: '/api/v1/admin/bot-traffic', feature: BOT_TRAFFIC, access: accountSettings },
  { prefix: '/api/v1/analytics/mentions', feature: MENTIONS, access: analytics },
  { prefix: '/api/v1/mentions', feature: MENTIONS, access: analytics },
  { prefix: '/api/v1/social-mentions', feature: MENTIONS, access: analytics },
];

/** Whatever a client of the hosted service sends in the query, the answer is the same 501. */
const AnyQuery = Type.Object({}, { additionalProperties: true });

export const notOfferedRoutes: FastifyPluginAsyncTypebox = async (app) => {
  for (const { prefix, feature, access } of NOT_OFFERED) {
    const schema = {
      hide: true,
      summary: `${feature}: not available in Sightline (501)`,
      querystring: AnyQuery,
      response: withErrors({ 501: ErrorEnvelope }),
    };
    const handler = async () => {
      throw new AppError(501, `${feature} is not available in Sightline: this self-hosted server does not offer it.`);
    };
    for (const url of [prefix, `${prefix}/*`]) {
      app.route({ method: 'GET', url, config: { access: access.read }, schema, handler });
      app.route({ method: ['POST', 'PUT', 'PATCH', 'DELETE'], url, config: { access: access.write }, schema, handler });
    }
  }
};
