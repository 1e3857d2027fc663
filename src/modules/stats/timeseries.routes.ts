import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { withErrors } from '../../http/schemas.ts';
import { websiteOf } from '../../http/request-context.ts';
import { Timeseries, TimeseriesQuery } from './timeseries.schemas.ts';
import { DERIVED_DATA_HEADER } from '../analytics/day-relocation.ts';
import * as service from './timeseries.service.ts';
import { IGNORED_PARAMS_HEADER, SAMPLE_RATE_HEADER } from './stats.params.ts';
import { IMPORTED_DATA_HEADER } from './imported-reads.ts';

const tags = ['Analytics'];

export const timeseriesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // Reads only: on SQLite they run in worker threads (src/db/sqlite-read-workers.ts).
  const deps = { db: app.db.reads, store: app.eventStore };

  app.get('/api/v1/analytics/timeseries', {
    config: { access: { scope: 'website', permission: 'analytics:read', action: 'read', apiKey: true, websiteIdIn: 'query' } },
    schema: {
      tags,
      summary: "Visitors, sessions, pageviews, revenue, payments and conversion rate per hour, day, week or month, in the website's time zone",
      querystring: TimeseriesQuery,
      response: withErrors({ 200: Timeseries }),
    },
    handler: async (request, reply) => {
      const ignored = service.ignoredSeriesParams(request.query);
      if (ignored.length > 0) reply.header(IGNORED_PARAMS_HEADER, ignored.join(', '));
      const notes: service.SeriesNotes = { rebuilding: false };
      // The read's now is its arrival, not the moment it got a read slot: a queue must not move its range.
      const now = new Date();
      const view = await app.analyticsRead(reply, () => service.timeseries(deps, websiteOf(request).websiteId, request.query, now, notes));
      if (notes.rebuilding) reply.header(DERIVED_DATA_HEADER, 'rebuilding');
      if (notes.imported) reply.header(IMPORTED_DATA_HEADER, notes.imported);
      if (notes.sampleRate !== undefined) reply.header(SAMPLE_RATE_HEADER, String(notes.sampleRate));
      return view;
    },
  });
};
