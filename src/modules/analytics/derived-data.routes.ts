import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Envelope, WebsiteParams, ok, withErrors } from '../../http/schemas.ts';
import { websiteOf } from '../../http/request-context.ts';
import { DerivedData } from './derived-data.schemas.ts';
import * as service from './derived-data.service.ts';

// With the website's settings in the document: who may read those may read this.
const tags = ['Websites'];

export const derivedDataRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.db.kysely;

  app.get('/websites/:websiteId/derived-data', {
    config: { access: { scope: 'website', permission: 'settings:read', action: 'read', apiKey: true } },
    schema: {
      tags,
      summary: "Whether the website's derived data is ready or being rebuilt (after a change of time zone, or an upgrade), and how far",
      description:
        'While a change of time zone moves the day rollups to the new zone, or a build derives every derived table again ' +
        'from the raw events (after an upgrade that adds one, or an operator\'s rebuild), in the background, the analytics ' +
        'reads that would use them read the raw events instead (slower) and answer with the header ' +
        'X-Sightline-Derived-Data: rebuilding. progress is visitorsDone / visitorsTotal for a move, eventsDone / eventsTotal ' +
        'for a build; a dashboard may poll this route until state is ready.',
      params: WebsiteParams,
      response: withErrors({ 200: Envelope(DerivedData) }),
    },
    handler: async (request) => ok([await service.getDerivedData(db, websiteOf(request).websiteId)]),
  });
};
