import type { FastifyPluginAsync } from 'fastify';
import { accessTokensRoutes } from './access-tokens/access-tokens.routes.ts';
import { accountRoutes } from './account/account.routes.ts';
import { apiKeysRoutes } from './api-keys/api-keys.routes.ts';
import { websitesRoutes } from './websites/websites.routes.ts';

/** Every module's routes, mounted under /api/v1/admin. */
export const adminModules: FastifyPluginAsync[] = [accountRoutes, accessTokensRoutes, websitesRoutes, apiKeysRoutes];
