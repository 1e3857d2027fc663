import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';

// Placeholder until this part lands; it registers no route.
export const analyticsRoutes: FastifyPluginAsyncTypebox = async () => {};
