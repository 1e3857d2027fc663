import type { FastifyPluginAsync } from 'fastify';
import { accessTokensRoutes } from './access-tokens/access-tokens.routes.ts';
import { accountRoutes } from './account/account.routes.ts';
import { alertsRoutes } from './alerts/alerts.routes.ts';
import { invitationLinksRoutes } from './dashboard/invitation-links.routes.ts';
import { passwordResetRoutes } from './dashboard/password-reset.routes.ts';
import { sessionsRoutes } from './dashboard/sessions.routes.ts';
import { websiteDeletionRoutes } from './dashboard/website-deletion.routes.ts';
import { timeseriesRoutes } from './stats/timeseries.routes.ts';
import { derivedDataRoutes } from './analytics/derived-data.routes.ts';
import { apiKeysRoutes } from './api-keys/api-keys.routes.ts';
import { ingestRoutes } from './events/ingest.routes.ts';
import { serverEventsRoutes } from './events/server-events.routes.ts';
import { statsRoutes } from './stats/stats.routes.ts';
import { funnelsRoutes } from './funnels/funnels.routes.ts';
import { goalsRoutes } from './goals/goals.routes.ts';
import { identifyRoutes } from './identify/identify.routes.ts';
import { integrationsRoutes } from './integrations/integrations.routes.ts';
import { webhooksRoutes } from './integrations/webhooks.routes.ts';
import { currencyRatesRoutes } from './currency-rates/currency-rates.routes.ts';
import { notOfferedRoutes } from './not-offered/not-offered.routes.ts';
import { notesRoutes } from './notes/notes.routes.ts';
import { exportRoutes } from './export/export.routes.ts';
import { segmentsRoutes } from './segments/segments.routes.ts';
import { mailSubscriptionsRoutes } from './reports/mail-subscriptions.routes.ts';
import { importsRoutes } from './imports/imports.routes.ts';
import { invitationsRoutes } from './team/invitations.routes.ts';
import { sharedLinksRoutes } from './shared-links/shared-links.routes.ts';
import { shareRoutes } from './shared-links/share.routes.ts';
import { teamRoutes } from './team/team.routes.ts';
import { websitesRoutes } from './websites/websites.routes.ts';

/** Every module's routes, mounted under /api/v1/admin. */
export const adminModules: FastifyPluginAsync[] = [
  accountRoutes,
  accessTokensRoutes,
  websitesRoutes,
  derivedDataRoutes,
  apiKeysRoutes,
  goalsRoutes,
  funnelsRoutes,
  alertsRoutes,
  teamRoutes,
  invitationsRoutes,
  integrationsRoutes,
  currencyRatesRoutes,
  notesRoutes,
  sharedLinksRoutes,
  mailSubscriptionsRoutes,
  segmentsRoutes,
  importsRoutes,
];

/**
 * The website API where the admin interface touches it (contract section 5), the hosted service's
 * routes Sightline answers 501, and the payment providers' webhook receiver; full paths.
 */
export const websiteApiModules: FastifyPluginAsync[] = [ingestRoutes, serverEventsRoutes, identifyRoutes, timeseriesRoutes, statsRoutes, exportRoutes, notOfferedRoutes, webhooksRoutes, shareRoutes];

/** The dashboard's own routes (sign-in, sessions, password reset, website deletion), under /api/v1/dashboard. */
export const dashboardModules: FastifyPluginAsync[] = [sessionsRoutes, passwordResetRoutes, invitationLinksRoutes, websiteDeletionRoutes];
