// What the OpenAPI document says about each operation beyond its schemas: a stable operationId
// (camelCase, verb first; clients generated from the document name their methods after it) and
// what its 200 answer holds. Keyed by "METHOD /path" as the document writes it, so a route added
// without an entry here fails test/openapi-operations.test.ts instead of shipping as
// "Default Response". Summaries and tags stay on each route, beside the schema they describe.
// The MCP tool names (src/mcp/operations.ts) are separate and stay as they are.

export interface OperationDoc {
  operationId: string;
  /** The description of the 200 response. */
  ok: string;
}

const A = '/api/v1/admin';
const D = '/api/v1/dashboard';
const W = `${A}/websites/{websiteId}`;

const PROVIDER_NAMES = { one: 'One', two: 'Two', three: 'Three', four: 'Four', five: 'Five', six: 'Six' } as const;
type ProviderNumber = keyof typeof PROVIDER_NAMES;
const CONNECTABLE: ProviderNumber[] = ['one', 'two', 'three', 'four'];

function providerOperations(): Record<string, OperationDoc> {
  const entries: Array<[string, OperationDoc]> = [];
  for (const n of CONNECTABLE) {
    entries.push([
      `POST ${W}/integrations/provider-${n}`,
      { operationId: `connectProvider${PROVIDER_NAMES[n]}`, ok: `provider-${n} is connected; its credentials are stored encrypted and never returned` },
    ]);
  }
  for (const n of CONNECTABLE) {
    entries.push([
      `POST ${W}/integrations/provider-${n}/resync`,
      { operationId: `resyncProvider${PROVIDER_NAMES[n]}History`, ok: `The check of provider-${n}'s credential and its history import are queued; their progress shows in getIntegrationStatus` },
    ]);
  }
  for (const n of Object.keys(PROVIDER_NAMES) as ProviderNumber[]) {
    entries.push([
      `DELETE ${W}/integrations/provider-${n}`,
      { operationId: `disconnectProvider${PROVIDER_NAMES[n]}`, ok: `provider-${n} is disconnected (disconnected is false when it was not connected)` },
    ]);
    entries.push([
      `PUT ${W}/integrations/provider-${n}/webhook`,
      { operationId: `setProvider${PROVIDER_NAMES[n]}WebhookSecret`, ok: `provider-${n}'s webhook signing secret is stored encrypted; the answer shows the webhook URL to paste` },
    ]);
  }
  return Object.fromEntries(entries);
}

export const OPERATION_DOCS: Record<string, OperationDoc> = {
  [`GET ${A}/account`]: { operationId: 'getAccount', ok: 'The account the credential belongs to, with its plan and limits' },
  [`PUT ${A}/account`]: { operationId: 'updateAccount', ok: 'The account, renamed' },

  [`GET ${A}/access-tokens`]: { operationId: 'listAccessTokens', ok: "The account's tokens, masked (displayKey), oldest first" },
  [`POST ${A}/access-tokens`]: { operationId: 'createAccessToken', ok: 'The new token, with its raw dft_ value in `token`: shown this once' },
  [`DELETE ${A}/access-tokens/{tokenId}`]: { operationId: 'revokeAccessToken', ok: 'The token is revoked; using it answers 401 from now on' },

  [`GET ${A}/websites`]: { operationId: 'listWebsites', ok: 'The websites the token may see, with the caller\'s role on each' },
  [`POST ${A}/websites`]: { operationId: 'createWebsite', ok: 'The new website, with its trackingId for the tracking script' },
  [`GET ${W}`]: { operationId: 'getWebsite', ok: "The website's settings" },
  [`PUT ${W}`]: { operationId: 'updateWebsite', ok: "The website's settings after the change" },
  [`DELETE ${W}`]: { operationId: 'deleteWebsite', ok: 'Never sent: the server always answers 403, because websites are deleted in the dashboard' },
  [`GET ${W}/derived-data`]: {
    operationId: 'getDerivedData',
    ok: "Whether the website's derived data is ready or being rebuilt for a new time zone, and how far (progress 0 to 1)",
  },

  [`GET ${W}/apikeys`]: { operationId: 'listApiKeys', ok: "The website's API keys, masked (displayKey)" },
  [`POST ${W}/apikeys`]: { operationId: 'createApiKey', ok: 'The new key, with its raw df_ value in `key`: shown this once' },
  [`PUT ${W}/apikeys/{apiKeyId}`]: { operationId: 'rollApiKey', ok: 'The same key with a new secret in `key`, shown this once; the old secret no longer works' },
  [`DELETE ${W}/apikeys/{apiKeyId}`]: { operationId: 'revokeApiKey', ok: 'The key is revoked; using it answers 401 from now on' },

  [`GET ${W}/goals`]: { operationId: 'listGoals', ok: 'The goals tracked on the website, most completions first, with their display customizations' },
  [`GET ${W}/goals/customizations`]: { operationId: 'listGoalCustomizations', ok: 'The goal display customizations, with the palette of colors in `colors`' },
  [`PATCH ${W}/goals/customizations`]: { operationId: 'updateGoalCustomization', ok: "The goal's display customization after the change" },
  [`DELETE ${W}/goals/customizations`]: { operationId: 'resetGoalCustomization', ok: 'The goal shows its defaults again (deleted says whether it had a customization)' },

  [`GET ${W}/funnels`]: { operationId: 'listFunnels', ok: "The website's active funnels, oldest first" },
  [`POST ${W}/funnels`]: { operationId: 'createFunnel', ok: 'The new funnel, with an id for each step' },
  [`PUT ${W}/funnels/{funnelId}`]: { operationId: 'updateFunnel', ok: 'The funnel after the change' },
  [`DELETE ${W}/funnels/{funnelId}`]: { operationId: 'deleteFunnel', ok: 'The funnel is inactive; updateFunnel with isActive: true revives it' },

  [`GET ${W}/alerts`]: { operationId: 'listAlerts', ok: "The website's alerts, oldest first" },
  [`POST ${W}/alerts`]: { operationId: 'createAlert', ok: 'The new alert' },
  [`PUT ${W}/alerts/{alertId}`]: { operationId: 'updateAlert', ok: 'The alert after the change' },
  [`DELETE ${W}/alerts/{alertId}`]: { operationId: 'deleteAlert', ok: 'The alert is deleted; its history stays' },
  [`GET ${W}/alerts/history`]: { operationId: 'listAlertHistory', ok: 'Alert firings, newest first, and counts per status in `counts`' },

  [`GET ${W}/team`]: { operationId: 'listTeam', ok: 'The team members, the owner included, and the pending invitations in `invitations`' },
  [`POST ${W}/team`]: {
    operationId: 'inviteTeamMember',
    ok: 'The invitation; the invited address is mailed a link to accept it (acceptInvitationLink), or accepts it with acceptInvitation',
  },
  [`DELETE ${W}/team`]: { operationId: 'removeTeamMember', ok: 'The member is removed, or the pending invitation withdrawn (see `removed`)' },

  [`GET ${A}/invitations`]: { operationId: 'listInvitations', ok: "The pending invitations addressed to the caller's e-mail" },
  [`POST ${A}/invitations/{invitationId}/accept`]: { operationId: 'acceptInvitation', ok: 'The caller joined the website with the invited role' },

  [`GET ${W}/shared-links`]: { operationId: 'listSharedLinks', ok: "The website's shared dashboard links, masked (displaySlug)" },
  [`POST ${W}/shared-links`]: { operationId: 'createSharedLink', ok: 'The new link, with its raw secret in `slug` and its public `url`: shown this once' },
  [`PUT ${W}/shared-links/{sharedLinkId}`]: { operationId: 'updateSharedLink', ok: 'The link after the change (a new or cleared password ends earlier unlocks)' },
  [`DELETE ${W}/shared-links/{sharedLinkId}`]: { operationId: 'revokeSharedLink', ok: 'The link is revoked; its URL answers 404 from now on' },

  [`POST ${W}/imports`]: { operationId: 'createImport', ok: 'The import is stored and queued (202); its progress and report show in getImport' },
  [`POST ${W}/imports/umami/websites`]: { operationId: 'listUmamiWebsites', ok: "The Umami database's websites, with their number of events" },
  [`POST ${W}/imports/umami`]: { operationId: 'createUmamiImport', ok: 'The Umami import is stored and queued (202); its progress (days read) and report show in getImport' },
  [`GET ${W}/imports`]: { operationId: 'listImports', ok: "The website's imports, newest first, with progress and report" },
  [`GET ${W}/imports/{importId}`]: { operationId: 'getImport', ok: 'The import, with its progress and report' },
  [`DELETE ${W}/imports/{importId}`]: { operationId: 'deleteImport', ok: 'The import is deleted: its data leaves the reads at once; its rows are removed in the background' },
  [`GET ${W}/notes`]: { operationId: 'listNotes', ok: "The website's notes, newest timestamp first, with `pagination`" },
  [`POST ${W}/notes`]: { operationId: 'createNote', ok: 'The new note, or the note an earlier request with the same idempotencyKey created' },
  [`PUT ${W}/notes/{noteId}`]: { operationId: 'updateNote', ok: 'The note after the change' },
  [`DELETE ${W}/notes/{noteId}`]: { operationId: 'deleteNote', ok: 'The note is deleted' },

  [`GET ${W}/segments`]: { operationId: 'listSegments', ok: "The caller's own segments and the team's shared ones, by name" },
  [`POST ${W}/segments`]: { operationId: 'createSegment', ok: 'The new segment' },
  [`PUT ${W}/segments/{segmentId}`]: { operationId: 'updateSegment', ok: 'The segment after the change' },
  [`DELETE ${W}/segments/{segmentId}`]: { operationId: 'deleteSegment', ok: 'The segment is deleted' },

  [`GET ${W}/integrations`]: { operationId: 'getIntegrationStatus', ok: 'Whether each provider is connected, and since when' },
  ...providerOperations(),
  [`PATCH ${W}/integrations/provider-four`]: { operationId: 'resyncProviderFour', ok: 'The re-sync is queued; its progress shows in getIntegrationStatus' },
  [`GET ${W}/currency-rates`]: { operationId: 'listCurrencyRates', ok: "The rates into the website's currency, with the currencies of payments that have none" },
  [`PUT ${W}/currency-rates/{currency}`]: { operationId: 'setCurrencyRate', ok: 'The rate is set; revenue in every report counts the currency at it' },
  [`DELETE ${W}/currency-rates/{currency}`]: { operationId: 'deleteCurrencyRate', ok: 'The rate is deleted (deleted is false when none was set)' },
  [`GET ${W}/mail-reports`]: { operationId: 'getMailReports', ok: "The caller's own reports by mail on the website, and the website's switches" },
  [`PUT ${W}/mail-reports`]: { operationId: 'updateMailReports', ok: "The caller's reports by mail after the change" },

  'POST /api/events': {
    operationId: 'recordEvent',
    ok: 'The event is stored (eventId, visitorId), or dropped by the website settings with the reason in `dropped`',
  },
  'POST /api/webhooks/{provider}/{websiteId}': {
    operationId: 'recordProviderWebhook',
    ok: "The provider's event is received: its payments recorded, or nothing when it was received before (duplicate)",
  },
  'POST /api/v1/goals': { operationId: 'recordGoal', ok: 'The goal completion is stored' },
  'DELETE /api/v1/goals': { operationId: 'deleteServerGoals', ok: 'The matching server-recorded goal completions are deleted (`deleted` counts them)' },
  'POST /api/v1/payments': { operationId: 'recordPayment', ok: 'The payment is recorded; the same transaction_id again records it once' },
  'DELETE /api/v1/payments': { operationId: 'deletePayments', ok: 'The matching payments are deleted (`deleted` counts them)' },
  'POST /api/v1/identify': { operationId: 'recordIdentity', ok: "The visitor's profile is stored (data is an object: {message, profileId})" },
  'GET /api/v1/analytics/timeseries': { operationId: 'getTimeseries', ok: 'One point per interval, and the totals over the period' },
  'GET /api/v1/analytics/overview': { operationId: 'getOverview', ok: 'The totals over the range (data holds one object)' },
  'GET /api/v1/analytics/pages': { operationId: 'listPagesBreakdown', ok: 'One row per pages value, most visitors first, with `pagination`' },
  'GET /api/v1/analytics/entry-pages': { operationId: 'listEntryPagesBreakdown', ok: 'One row per entry pages value, most visitors first, with `pagination`' },
  'GET /api/v1/analytics/exit-pages': { operationId: 'listExitPagesBreakdown', ok: 'One row per exit pages value, most visitors first, with `pagination`' },
  'GET /api/v1/analytics/referrers': { operationId: 'listReferrersBreakdown', ok: 'One row per referrers value, most visitors first, with `pagination`' },
  'GET /api/v1/analytics/campaigns': { operationId: 'listCampaignsBreakdown', ok: 'One row per campaigns value, most visitors first, with `pagination`' },
  'GET /api/v1/analytics/countries': { operationId: 'listCountriesBreakdown', ok: 'One row per countries value, most visitors first, with `pagination`' },
  'GET /api/v1/analytics/regions': { operationId: 'listRegionsBreakdown', ok: 'One row per regions value, most visitors first, with `pagination`' },
  'GET /api/v1/analytics/cities': { operationId: 'listCitiesBreakdown', ok: 'One row per cities value, most visitors first, with `pagination`' },
  'GET /api/v1/analytics/devices': { operationId: 'listDevicesBreakdown', ok: 'One row per devices value, most visitors first, with `pagination`' },
  'GET /api/v1/analytics/browsers': { operationId: 'listBrowsersBreakdown', ok: 'One row per browsers value, most visitors first, with `pagination`' },
  'GET /api/v1/analytics/operating-systems': { operationId: 'listOperatingSystemsBreakdown', ok: 'One row per operating systems value, most visitors first, with `pagination`' },
  'GET /api/v1/analytics/hostnames': { operationId: 'listHostnamesBreakdown', ok: 'One row per hostnames value, most visitors first, with `pagination`' },
  'GET /api/v1/analytics/goals': { operationId: 'listGoalsBreakdown', ok: 'One row per goals value, most visitors first, with `pagination`' },
  'GET /api/v1/analytics/exit-clicks': { operationId: 'listExitClicksBreakdown', ok: 'One row per exit clicks value, most visitors first, with `pagination`' },
  'GET /api/v1/analytics/goals/properties': { operationId: 'listGoalProperties', ok: 'One row per property value of the goal, with `pagination`' },
  'GET /api/v1/analytics/realtime': { operationId: 'getRealtime', ok: 'Visitors with an event in the last 5 minutes' },
  'GET /api/v1/analytics/realtime/map': { operationId: 'getRealtimeMap', ok: 'The visitors of the last 10 minutes, recent events and payments (data is an object)' },
  'GET /api/v1/analytics/metadata': { operationId: 'getWebsiteMetadata', ok: "The website's domain, name, time zone, currency and KPI" },
  'GET /api/v1/analytics/funnels/{funnelId}': { operationId: 'getFunnelReport', ok: 'Visitors, conversion and drop-off at each step of the funnel' },
  'GET /api/v1/analytics/export': {
    operationId: 'exportReports',
    ok: 'A zip of CSV files, one per report of the period under the filters (application/zip, streamed)',
  },
  'GET /api/v1/export/raw': {
    operationId: 'exportRawData',
    ok: "The website's raw events and payments as NDJSON after a versioned header line (application/x-ndjson, gzip when asked, streamed)",
  },
  'GET /api/v1/visitors': { operationId: 'listVisitors', ok: 'Visitors, newest activity first, with `pagination`' },
  'GET /api/v1/visitors/{visitorId}': { operationId: 'getVisitor', ok: 'The visitor (data is an object)' },
  [`GET ${D}/setup`]: { operationId: 'getSetupState', ok: 'Whether the first-run setup is to do and whether sign-up is open' },
  [`POST ${D}/setup`]: { operationId: 'setUpFirstAccount', ok: 'The first account exists and is signed in; the session cookie is set' },
  [`POST ${D}/sign-up`]: { operationId: 'signUp', ok: 'The account exists and is signed in; the session cookie is set' },
  [`POST ${D}/sign-in`]: { operationId: 'signIn', ok: 'Signed in; the session cookie is set' },
  [`GET ${D}/session`]: { operationId: 'getDashboardSession', ok: 'The signed-in account and its CSRF token' },
  [`POST ${D}/sign-out`]: { operationId: 'signOut', ok: 'The session has ended and its cookie is cleared' },
  [`POST ${D}/sign-out-everywhere`]: { operationId: 'signOutEverywhere', ok: 'Every session of the account has ended' },
  [`GET ${D}/sessions`]: { operationId: 'listDashboardSessions', ok: "The account's active sessions, most recently used first" },
  [`DELETE ${D}/sessions/{sessionId}`]: { operationId: 'endDashboardSession', ok: 'The session has ended' },
  [`PUT ${D}/password`]: { operationId: 'changePassword', ok: 'The password is changed; the other sessions have ended' },
  [`POST ${D}/reauthenticate`]: { operationId: 'confirmPassword', ok: 'The session counts as freshly signed in' },
  [`POST ${D}/password-reset`]: {
    operationId: 'createPasswordReset',
    ok: 'The same message whether or not an account has the address; if one has, a link to set a new password is mailed to it',
  },
  [`POST ${D}/password-reset/confirm`]: { operationId: 'confirmPasswordReset', ok: 'The password is set; the link is used up and every session of the account has ended' },
  [`GET ${D}/invitations/{token}`]: { operationId: 'getInvitationLink', ok: 'The invitation the link names, and whether an account has the invited address' },
  [`POST ${D}/invitations/accept`]: {
    operationId: 'acceptInvitationLink',
    ok: 'The account (new, or the existing one of the invited address) joined the website and is signed in; the session cookie is set',
  },
  [`DELETE ${D}/websites/{websiteId}`]: { operationId: 'deleteWebsiteFromDashboard', ok: 'The website and everything it held are deleted' },
};

/** The document's key for a route: "GET /api/v1/admin/websites/{websiteId}". */
export function operationKey(method: string, url: string): string {
  return `${method.toUpperCase()} ${url.replace(/:(\w+)/g, '{$1}')}`;
}
