import { randomUUID } from 'node:crypto';
import cookie from '@fastify/cookie';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Config } from './config.ts';
import { type Db, createDatabase } from './db/database.ts';
import { answerClientError } from './http/client-errors.ts';
import { lazyChildLogger, loggerOptions } from './http/logging.ts';
import { validatorCompiler } from './http/validation.ts';
import { configureGeoDatabase } from './modules/events/ingest.geo.ts';
import { adminModules, dashboardModules, websiteApiModules } from './modules/index.ts';
import { unsubscribeRoutes } from './modules/reports/unsubscribe.routes.ts';
import analyticsReads from './plugins/analytics-reads.ts';
import background from './plugins/background.ts';
import countryFlags from './plugins/country-flags.ts';
import dashboardPages from './plugins/dashboard-pages.ts';
import database from './plugins/database.ts';
import errorHandler, { sendError, toErrorResponse } from './plugins/error-handler.ts';
import eventStore from './plugins/event-store.ts';
import eventWriter from './plugins/event-writer.ts';
import health from './plugins/health.ts';
import integrationJobs from './plugins/integration-jobs.ts';
import importJobs from './plugins/import-jobs.ts';
import jsonBody, { BODY_LIMIT } from './plugins/json-body.ts';
import keyring from './plugins/keyring.ts';
import mail from './plugins/mail.ts';
import mailReports from './plugins/mail-reports.ts';
import metrics from './plugins/metrics.ts';
import openapi from './plugins/openapi.ts';
import routeGuard from './plugins/route-guard.ts';
import trackerScript from './plugins/tracker-script.ts';

export interface BuildOptions {
  config: Config;
  /** An open, migrated database; when left out one is opened from config.databaseUrl. */
  db?: Db;
  /**
   * Whether closing the app closes `db`, after every other onClose hook (the rollups and the relay
   * still need it then). Default: only the database the app opened itself.
   */
  closeDb?: boolean;
  /** Logger override (tests capture lines; false silences). */
  logger?: boolean | object;
}

export async function buildApp(options: BuildOptions): Promise<FastifyInstance> {
  const { config } = options;
  const app = Fastify({
    logger: options.logger ?? loggerOptions(config.logLevel),
    trustProxy: config.trustProxy,
    bodyLimit: BODY_LIMIT,
    genReqId: () => randomUUID(),
    childLoggerFactory: lazyChildLogger,
    // Router-level failures (a malformed %-escape, an over-long path parameter) answer in the
    // same envelope as everything else.
    frameworkErrors: (error, request, reply) => sendError(reply, request, toErrorResponse(error)),
    // Requests the HTTP parser refuses, answered on the socket in the same envelope.
    clientErrorHandler: answerClientError,
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  // Process-wide, read asynchronously before the app can serve, so the first event never waits
  // for it; a bad GEOIP_DATABASE path fails the start, naming the path.
  await configureGeoDatabase(config.geoipDatabase);
  const db = options.db ?? createDatabase(config.databaseUrl);
  await app.register(database, { db, config, ownsDb: options.closeDb ?? !options.db });
  await app.register(keyring);
  await app.register(background);
  await app.register(eventWriter);
  await app.register(eventStore);
  await app.register(mail);
  await app.register(mailReports);
  await app.register(errorHandler);
  await app.register(metrics);
  // After metrics: it times each read's wait for a slot and its service.
  await app.register(analyticsReads);
  await app.register(integrationJobs);
  await app.register(importJobs);
  await app.register(jsonBody);
  // The dashboard's session cookie (parsed for every request; only the route guard reads it).
  await app.register(cookie);
  await app.register(openapi);

  await app.register(health);
  await app.register(trackerScript);
  await app.register(countryFlags);
  await app.register(dashboardPages);
  await app.register(unsubscribeRoutes);

  await app.register(async (api) => {
    await api.register(routeGuard);
    for (const module of adminModules) await api.register(module, { prefix: '/api/v1/admin' });
    for (const module of websiteApiModules) await api.register(module);
    for (const module of dashboardModules) await api.register(module, { prefix: '/api/v1/dashboard' });
  });

  return app;
}
