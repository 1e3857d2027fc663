import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';

// Placeholder until this module lands; it registers no route.
export const goalsRoutes: FastifyPluginAsyncTypebox = async () => {};
