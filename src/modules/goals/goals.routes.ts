import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { EmptyBody, Envelope, WebsiteParams, ok, withErrors } from '../../http/schemas.ts';
import { websiteOf } from '../../http/request-context.ts';
import {
  CUSTOMIZATION_BODY_LIMIT,
  CustomizationReset,
  GoalCustomization,
  GoalNameQuery,
  PaletteColor,
  UpdateGoalCustomizationBody,
} from './goals.schemas.ts';
import * as service from './goals.service.ts';
import { TrackedGoal, TrackedGoalsQuery } from './tracked-goals.schemas.ts';
import { listTrackedGoals } from './tracked-goals.service.ts';

const tags = ['Goals'];

export const goalsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.db.kysely;

  app.get('/websites/:websiteId/goals', {
    config: { access: { scope: 'website', permission: 'settings:read', action: 'read', apiKey: true } },
    schema: {
      tags,
      summary: 'List the goals the website has tracked, most completions first, with their display customizations',
      description:
        'All time by default. With startAt and endAt (both or neither; each a YYYY-MM-DD day in the ' +
        "website's time zone, whole day included, or an ISO-8601 instant) only completions in that period count.",
      params: WebsiteParams,
      querystring: TrackedGoalsQuery,
      response: withErrors({ 200: Envelope(TrackedGoal) }),
    },
    handler: async (request) => ok(await listTrackedGoals(db, app.eventLog, websiteOf(request).websiteId, request.query)),
  });

  app.get('/websites/:websiteId/goals/customizations', {
    config: { access: { scope: 'website', permission: 'goals:read', action: 'read', apiKey: true } },
    schema: {
      tags,
      summary: "List the website's goal display customizations, with the palette of colors they may use",
      params: WebsiteParams,
      response: withErrors({ 200: Envelope(GoalCustomization, { colors: Type.Array(PaletteColor) }) }),
    },
    handler: async (request) => ({
      ...ok(await service.listGoalCustomizations(db, websiteOf(request).websiteId)),
      colors: service.goalPalette(),
    }),
  });

  app.patch('/websites/:websiteId/goals/customizations', {
    config: { access: { scope: 'website', permission: 'goals:write', action: 'manage', apiKey: true } },
    bodyLimit: CUSTOMIZATION_BODY_LIMIT,
    schema: {
      tags,
      summary: "Set a goal's display name, color or description (only the fields sent change; null clears)",
      params: WebsiteParams,
      body: UpdateGoalCustomizationBody,
      response: withErrors({ 200: Envelope(GoalCustomization) }),
    },
    handler: async (request) => ok([await service.updateGoalCustomization(db, websiteOf(request).websiteId, request.body)]),
  });

  app.delete('/websites/:websiteId/goals/customizations', {
    config: { access: { scope: 'website', permission: 'goals:write', action: 'manage', apiKey: true } },
    schema: {
      tags,
      summary: 'Reset a goal to its default display metadata',
      params: WebsiteParams,
      querystring: GoalNameQuery,
      body: EmptyBody,
      response: withErrors({ 200: Envelope(CustomizationReset) }),
    },
    handler: async (request) => ok([await service.resetGoalCustomization(db, websiteOf(request).websiteId, request.query.goalName)]),
  });
};
