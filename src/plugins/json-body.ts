import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import secureJson from 'secure-json-parse';
import { badRequest } from '../errors.ts';

// JSON is the only body the API takes (anything else is a 415). An empty body counts as no
// body, so `DELETE` or a key roll sent with a JSON content type and nothing else just works.
// Prototype-poisoning keys are refused, as Fastify's own parser does.

export const BODY_LIMIT = 64 * 1024;

async function jsonBody(app: FastifyInstance): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: BODY_LIMIT }, (_request, body, done) => {
    const text = (body as string).trim();
    if (text === '') return done(null, undefined);
    try {
      done(null, secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }));
    } catch {
      done(badRequest('The body is not valid JSON'), undefined);
    }
  });
  // A route with a body schema and no body sent validates an empty object, so the answer
  // names the missing fields instead of "body must be object".
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined && request.routeOptions.schema?.body) request.body = {};
  });
}

export default fp(jsonBody, { name: 'json-body' });
