import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { EmptyBody, Envelope, Message, WebsiteParams, ok, withErrors } from '../../http/schemas.ts';
import { websiteOf } from '../../http/request-context.ts';
import {
  Alert,
  AlertHistoryCounts,
  AlertHistoryEntry,
  AlertHistoryQuery,
  AlertParams,
  CreateAlertBody,
  UpdateAlertBody,
} from './alerts.schemas.ts';
import * as service from './alerts.service.ts';

const tags = ['Alerts'];

export const alertsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.db.kysely;

  app.get('/websites/:websiteId/alerts', {
    config: { access: { scope: 'website', permission: 'alerts:read', action: 'read', apiKey: true } },
    schema: { tags, summary: "List the website's alerts, oldest first", params: WebsiteParams, response: withErrors({ 200: Envelope(Alert) }) },
    handler: async (request) => ok(await service.listAlerts(db, websiteOf(request).websiteId)),
  });

  app.post('/websites/:websiteId/alerts', {
    config: { access: { scope: 'website', permission: 'alerts:write', action: 'manage', apiKey: true } },
    schema: {
      tags,
      summary: 'Create an alert that emails the website owner when a goal fires',
      params: WebsiteParams,
      body: CreateAlertBody,
      response: withErrors({ 200: Envelope(Alert) }),
    },
    handler: async (request) =>
      ok([await service.createAlert(db, websiteOf(request).websiteId, request.body, app.config.limits.alertsPerWebsite)]),
  });

  // Static, so it wins over /alerts/:alertId should a GET on that path ever be added.
  app.get('/websites/:websiteId/alerts/history', {
    config: { access: { scope: 'website', permission: 'alerts:read', action: 'read', apiKey: true } },
    schema: {
      tags,
      summary: 'Recent alert firings, newest first, with counts per status over every matching entry',
      params: WebsiteParams,
      querystring: AlertHistoryQuery,
      response: withErrors({ 200: Envelope(AlertHistoryEntry, { counts: AlertHistoryCounts }) }),
    },
    handler: async (request) =>
      service.listAlertHistory(db, websiteOf(request).websiteId, request.query).then(({ entries, counts }) => ({ ...ok(entries), counts })),
  });

  app.put('/websites/:websiteId/alerts/:alertId', {
    config: { access: { scope: 'website', permission: 'alerts:write', action: 'manage', apiKey: true } },
    schema: {
      tags,
      summary: 'Update an alert (only the fields sent change; template merges)',
      params: AlertParams,
      body: UpdateAlertBody,
      response: withErrors({ 200: Envelope(Alert) }),
    },
    handler: async (request) => ok([await service.updateAlert(db, websiteOf(request).websiteId, request.params.alertId, request.body)]),
  });

  app.delete('/websites/:websiteId/alerts/:alertId', {
    config: { access: { scope: 'website', permission: 'alerts:write', action: 'manage', apiKey: true } },
    schema: { tags, summary: 'Delete an alert (its history is kept)', params: AlertParams, body: EmptyBody, response: withErrors({ 200: Envelope(Message) }) },
    handler: async (request) => ok([await service.deleteAlert(db, websiteOf(request).websiteId, request.params.alertId)]),
  });
};
