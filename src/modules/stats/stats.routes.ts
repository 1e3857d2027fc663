import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { withErrors } from '../../http/schemas.ts';
import { websiteOf } from '../../http/request-context.ts';
import type { WebsiteScopedAccess } from '../../plugins/route-access.ts';
import { BREAKDOWNS } from '../analytics/breakdowns.ts';
import { IGNORED_PARAMS_HEADER, SAMPLE_RATE_HEADER } from './stats.params.ts';
import { IMPORTED_DATA_HEADER, type ImportedUse } from './imported-reads.ts';
import { DERIVED_DATA_HEADER } from '../analytics/day-relocation.ts';
import {
  BreakdownAnswers,
  BreakdownQuery,
  FunnelParams,
  FunnelQuery,
  FunnelReport,
  Metadata,
  MetadataQuery,
  Overview,
  OverviewQuery,
  PlainQuery,
  Properties,
  PropertiesQuery,
  Realtime,
  RealtimeMap,
  VisitorList,
  VisitorPage,
  VisitorParams,
  VisitorsQuery,
} from './stats.schemas.ts';
import * as service from './stats.service.ts';

// The website API's reads (website-api.md section 3), for a df_ key (its own website) or an
// account token with analytics:read and ?websiteId= (the id or the trackingId).

const tags = ['Analytics'];
const read: { access: WebsiteScopedAccess } = {
  access: { scope: 'website', permission: 'analytics:read', action: 'read', apiKey: true, websiteIdIn: 'query' },
};

function answer<T>(reply: FastifyReply, result: { body: T; ignored: string[]; rebuilding?: boolean; imported?: ImportedUse; sampleRate?: number }): T {
  if (result.ignored.length > 0) reply.header(IGNORED_PARAMS_HEADER, result.ignored.join(', '));
  if (result.sampleRate !== undefined) reply.header(SAMPLE_RATE_HEADER, String(result.sampleRate));
  if (result.rebuilding) reply.header(DERIVED_DATA_HEADER, 'rebuilding');
  if (result.imported) reply.header(IMPORTED_DATA_HEADER, result.imported);
  return result.body;
}

export const statsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // Reads only: on SQLite they run in worker threads (src/db/sqlite-read-workers.ts).
  const deps = { db: app.db.reads, store: app.eventStore, publicUrl: app.config.publicUrl };
  const site = (request: Parameters<typeof websiteOf>[0]) => websiteOf(request).websiteId;

  app.get('/api/v1/analytics/overview', {
    config: read,
    schema: {
      tags,
      summary: 'Visitors, sessions, pageviews, bounce rate, session duration, revenue and conversion rate over a range',
      querystring: OverviewQuery,
      response: withErrors({ 200: Overview }),
    },
    handler: async (request, reply) => answer(reply, await app.analyticsRead(reply, () => service.overview(deps, site(request), request.query))),
  });

  for (const kind of BREAKDOWNS) {
    app.get(`/api/v1/analytics/${kind}`, {
      config: read,
      schema: {
        tags,
        summary: `Visitors, pageviews and revenue by ${kind.replace(/-/g, ' ')}, most visitors first`,
        querystring: BreakdownQuery,
        response: withErrors({ 200: BreakdownAnswers[kind] }),
      },
      handler: async (request, reply) => answer(reply, await app.analyticsRead(reply, () => service.breakdown(deps, kind, site(request), request.query))),
    });
  }

  app.get('/api/v1/analytics/goals/properties', {
    config: read,
    schema: {
      tags,
      summary: "Completions and visitors per value of a custom goal's properties",
      querystring: PropertiesQuery,
      response: withErrors({ 200: Properties }),
    },
    handler: async (request, reply) => answer(reply, await app.analyticsRead(reply, () => service.goalProperties(deps, site(request), request.query))),
  });

  app.get('/api/v1/analytics/realtime', {
    config: read,
    schema: { tags, summary: 'Visitors with an event in the last 5 minutes', querystring: PlainQuery, response: withErrors({ 200: Realtime }) },
    handler: async (request, reply) => answer(reply, await app.analyticsRead(reply, () => service.realtime(deps, site(request), request.query))),
  });

  app.get('/api/v1/analytics/realtime/map', {
    config: read,
    schema: {
      tags,
      summary: 'Who is on the website (last 10 minutes): visitors with place and device, recent events and payments',
      querystring: PlainQuery,
      response: withErrors({ 200: RealtimeMap }),
    },
    handler: async (request, reply) => answer(reply, await app.analyticsRead(reply, () => service.realtimeMap(deps, site(request), request.query))),
  });

  app.get('/api/v1/analytics/metadata', {
    config: read,
    schema: { tags, summary: "The website's domain, name, time zone, currency and KPI", querystring: MetadataQuery, response: withErrors({ 200: Metadata }) },
    handler: async (request, reply) => answer(reply, await app.analyticsRead(reply, () => service.metadata(deps, site(request), request.query))),
  });

  app.get('/api/v1/analytics/funnels/:funnelId', {
    config: read,
    schema: {
      tags,
      summary: 'Visitors and conversion at each step of an active funnel (last 30 days by default)',
      params: FunnelParams,
      querystring: FunnelQuery,
      response: withErrors({ 200: FunnelReport }),
    },
    handler: async (request, reply) => answer(reply, await app.analyticsRead(reply, () => service.funnelReport(deps, site(request), request.params.funnelId, request.query))),
  });

  app.get('/api/v1/visitors', {
    config: read,
    schema: {
      tags: ['Visitors'],
      summary: "The website's visitors, newest activity first",
      querystring: VisitorsQuery,
      response: withErrors({ 200: VisitorList }),
    },
    handler: async (request, reply) => answer(reply, await app.analyticsRead(reply, () => service.visitors(deps, site(request), request.query))),
  });

  app.get('/api/v1/visitors/:visitorId', {
    config: read,
    schema: {
      tags: ['Visitors'],
      summary: 'One visitor: place, device, activity, goals and profile (404 for a visitor this website has not seen)',
      params: VisitorParams,
      querystring: PlainQuery,
      response: withErrors({ 200: VisitorPage }),
    },
    handler: async (request, reply) => answer(reply, await app.analyticsRead(reply, () => service.visitor(deps, site(request), request.params.visitorId, request.query))),
  });

};
