import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { EmptyBody, Envelope, Message, WebsiteParams, ok, withErrors } from '../../http/schemas.ts';
import { accountCallerOf, websiteOf } from '../../http/request-context.ts';
import { CreateSegmentBody, Segment, SegmentParams, UpdateSegmentBody } from './segments.schemas.ts';
import * as service from './segments.service.ts';

// Segments belong to a person, so a website's df_ key (no person) cannot use them.
const tags = ['Segments'];

function callerOf(request: FastifyRequest): service.SegmentCaller {
  const { websiteId, role } = websiteOf(request);
  return { websiteId, role, accountId: accountCallerOf(request).accountId };
}

export const segmentsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.db.kysely;

  app.get('/websites/:websiteId/segments', {
    config: { access: { scope: 'website', permission: 'segments:read', action: 'read', apiKey: false } },
    schema: {
      tags,
      summary: "The website's segments the caller sees (its own and the team's shared ones), by name",
      params: WebsiteParams,
      response: withErrors({ 200: Envelope(Segment) }),
    },
    handler: async (request) => ok(await service.listSegments(db, callerOf(request))),
  });

  app.post('/websites/:websiteId/segments', {
    config: { access: { scope: 'website', permission: 'segments:write', action: 'read', apiKey: false } },
    schema: {
      tags,
      summary: 'Save a set of analytics filters as a segment (personal unless shared; sharing takes the owner or member role)',
      params: WebsiteParams,
      body: CreateSegmentBody,
      response: withErrors({ 200: Envelope(Segment) }),
    },
    handler: async (request) => ok([await service.createSegment(db, callerOf(request), request.body)]),
  });

  app.put('/websites/:websiteId/segments/:segmentId', {
    config: { access: { scope: 'website', permission: 'segments:write', action: 'read', apiKey: false } },
    schema: {
      tags,
      summary: "Change a segment (only the fields sent change): its author's, or a shared one as the website's owner",
      params: SegmentParams,
      body: UpdateSegmentBody,
      response: withErrors({ 200: Envelope(Segment) }),
    },
    handler: async (request) => ok([await service.updateSegment(db, callerOf(request), request.params.segmentId, request.body)]),
  });

  app.delete('/websites/:websiteId/segments/:segmentId', {
    config: { access: { scope: 'website', permission: 'segments:write', action: 'read', apiKey: false } },
    schema: { tags, summary: 'Delete a segment (its author, or the website owner for a shared one)', params: SegmentParams, body: EmptyBody, response: withErrors({ 200: Envelope(Message) }) },
    handler: async (request) => ok([await service.deleteSegment(db, callerOf(request), request.params.segmentId)]),
  });
};
