import swagger, { type SwaggerTransform } from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { SESSION_COOKIE } from '../auth/sessions.ts';
import { OPERATION_DOCS, operationKey } from '../http/operations.ts';

// The OpenAPI document is generated from the route schemas (never written by hand) and served
// at /api/v1/openapi.json, with a readable page at /docs. (GET / is the dashboard's, which still
// answers these two links to a client asking for JSON: src/plugins/dashboard-pages.ts.)

export const DOCS_PATH = '/docs';
export const OPENAPI_PATH = '/api/v1/openapi.json';

/** The groups of the document, in the order a reader meets them, each said in one line. */
const TAGS = [
  { name: 'Account', description: 'The account the credential belongs to.' },
  { name: 'Account tokens', description: 'dft_ tokens that act for the account, each with its permissions and websites.' },
  { name: 'Websites', description: 'The websites tracked, and their settings.' },
  { name: 'Website API keys', description: 'df_ keys that act for one website, for a backend.' },
  { name: 'Goals', description: 'Goals tracked on a website, and how the dashboard shows them.' },
  { name: 'Funnels', description: 'Step-by-step conversion paths.' },
  { name: 'Alerts', description: 'E-mails to the website owner when a goal is completed, and their history.' },
  { name: 'Team', description: "Who else may see or manage a website: members and pending invitations." },
  { name: 'Invitations', description: "Invitations addressed to the caller's e-mail." },
  { name: 'Notes', description: "Annotations on a website's charts (a launch, an outage), with who wrote them." },
  { name: 'Segments', description: 'Saved sets of analytics filters: personal, or shared with the website\'s team.' },
  { name: 'Integrations', description: 'Payment providers connected to a website; credentials are never returned.' },
  { name: 'Imports', description: "Another tool's history imported into a website (Plausible's CSV export), merged into the reads for the days it covers." },
  { name: 'Currency rates', description: "The owner's exchange rates: payments in another currency count in the website's currency at these rates." },
  { name: 'Shared dashboards', description: "Public, read-only links to a website's analytics page, optionally with a password." },
  { name: 'Reports by mail', description: "Each member's own reports by mail on a website (weekly, monthly, traffic-spike alerts); the website's switches are its settings sendWeeklyReports and sendViralTrafficAlerts." },
  { name: 'Analytics', description: 'Visitors, pageviews, revenue and conversion: over time, overall, broken down, live, and through funnels.' },
  { name: 'Visitors', description: 'Who visited: one visitor with their place, device, pages, goals and profile, or the list of them.' },
  { name: 'Export', description: "Every report of a period as CSV files in a zip, and the website's raw events and payments as NDJSON." },
  { name: 'Website API', description: 'Goals and payments sent by a backend, with a df_ key or an account token.' },
  { name: 'Events', description: 'What the tracking script sends from the browser: no credential.' },
  { name: 'Dashboard', description: "The dashboard's own routes: first-run setup, sign-in, sessions, passwords, invitation links, website deletion." },
];


/** What each error answer means on any route; error.message says the particular case. */
const ERROR_DESCRIPTIONS: Record<string, string> = {
  400: 'The request is invalid; error.details names each field at fault',
  401: 'No credential, or one that is unknown, expired or revoked',
  403: 'The credential is valid but may not do this',
  404: 'Not found, or not visible to this credential',
  409: 'Conflicts with what exists (a duplicate name or domain, say)',
  413: 'The body is larger than this route accepts',
  415: 'The body is in a Content-Type this route does not read',
  410: 'Gone: the provider is not connected to this website, or has no signing secret; it should stop sending',
  429: 'Too many requests; Retry-After says when to try again',
  503: 'A dependency (the database) is unavailable; try again later',
};

function describeResponses(response: Record<string, object>, ok: string | undefined): Record<string, object> {
  return Object.fromEntries(
    Object.entries(response).map(([status, schema]) => {
      // A route's success: 200, or 202 for work accepted to run in the background (an import).
      const description = status === '200' || status === '202' ? ok : ERROR_DESCRIPTIONS[status];
      return [status, description ? { ...schema, 'x-response-description': description } : schema];
    }),
  );
}

/**
 * Adds what the central table (src/http/operations.ts) says to each documented route: its
 * operationId and the description of its 200 answer (a route left out of the table is caught by
 * test/openapi-operations.test.ts); and `security: []` where the route itself takes no
 * credential, so the document says what the route guard does.
 */
const describeOperation: SwaggerTransform = ({ schema, url, route }) => {
  if (!schema || (schema as { hide?: boolean }).hide) return { schema, url };
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  const doc = OPERATION_DOCS[operationKey(methods[0]!, url)];
  const response = schema.response as Record<string, object> | undefined;
  const access = route.config?.access;
  const isPublic = access !== undefined && 'public' in access && access.public;
  const sessionOnly = access !== undefined && 'scope' in access && access.sessionOnly === true;
  return {
    url,
    schema: {
      ...schema,
      ...(doc ? { operationId: doc.operationId } : {}),
      ...(isPublic ? { security: [] } : sessionOnly ? { security: [{ session: [] }] } : {}),
      ...(response ? { response: describeResponses(response, doc?.ok) } : {}),
    },
  };
};

async function openapi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Sightline administration API',
        version: '1.0.0',
        license: { name: 'MIT', identifier: 'MIT' },
        description:
          'Websites, account tokens, website API keys, goals, funnels, alerts, team members and integrations. ' +
          'Every response uses the envelope {status, data} or {status, error: {code, message}}. ' +
          'Send an account token (dft_...) or a website API key (df_...) as `Authorization: Bearer ...`; ' +
          'browser events (POST /api/events) need none.',
      },
      servers: [{ url: app.config.publicUrl }],
      tags: TAGS,
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'An account token (dft_...) or a website API key (df_...)' },
          session: {
            type: 'apiKey',
            in: 'cookie',
            name: SESSION_COOKIE,
            description:
              "The dashboard's session cookie (set by sign-in), with the account's full rights; every write also sends X-CSRF-Token. Ignored when Authorization is sent.",
          },
        },
      },
      security: [{ bearer: [] }, { session: [] }],
    },
    transform: describeOperation,
  });
  await app.register(swaggerUi, {
    routePrefix: DOCS_PATH,
    uiConfig: { docExpansion: 'list', deepLinking: true },
    theme: { title: 'Sightline API documentation' },
  });
  app.get(OPENAPI_PATH, { schema: { hide: true } }, async () => app.swagger());
}

export default fp(openapi, { name: 'openapi', dependencies: ['database'] });
