import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

// The OpenAPI document is generated from the route schemas (never written by hand) and served
// at /api/v1/openapi.json, with a readable page at /docs.

async function openapi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Sightline administration API',
        version: '1.0.0',
        description:
          'Websites, account tokens, website API keys, goals, funnels, alerts, team members and integrations. ' +
          'Every response uses the envelope {status, data} or {status, error: {code, message}}.',
      },
      servers: [{ url: app.config.publicUrl }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'An account token (dft_...) or a website API key (df_...)' },
        },
      },
      security: [{ bearer: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });
  app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

export default fp(openapi, { name: 'openapi', dependencies: ['database'] });
