import type { Permission } from '../auth/permissions.ts';
import { BREAKDOWNS } from '../modules/analytics/breakdowns.ts';

// The one hand-written part of the MCP catalogue: for each operation of openapi.json, its stable
// tool name, the permission the route declares (the document does not carry it) and what kind of
// change it makes. Everything else (summary, parameters, body fields and their rules) is read from
// the document, so a schema change reaches the tools with `npm run openapi`. test/mcp.test.ts fails
// when an operation has no entry here or an entry names the wrong permission.

/**
 * read: changes nothing. write: creates or updates. destroy: removes or replaces something that
 * cannot be had back. credential: issues a new secret. destroy and credential need `confirm: true`.
 */
export type OperationKind = 'read' | 'write' | 'destroy' | 'credential';

export interface OperationEntry {
  tool: string;
  permission: Permission;
  kind: OperationKind;
  /** A rule beyond the permission, said in the description. */
  note?: string;
  /** Rolling a key both issues a credential and destroys the old one. */
  alsoDestroys?: true;
  /** The answer is a file: a zip of CSV files (answered as their text), or NDJSON text (gzip unpacked). */
  download?: 'zip' | 'text';
}

export type OperationKey = `${'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'} ${string}`;

const A = '/api/v1/admin';
const W = `${A}/websites/{websiteId}`;

const OWNER_ONLY = 'The caller must own the website.';
const SEGMENT_EDITORS = "The caller must be the segment's author, or the website's owner for a shared one.";
const PROVIDERS = ['one', 'two', 'three', 'four', 'five', 'six'] as const;
/** Providers this interface can connect (five and six are connected elsewhere and only disconnected here). */
const CONNECTABLE = ['one', 'two', 'three', 'four'] as const;

const R = '/api/v1/analytics';
const RAW_EXPORT = '/api/v1/export/raw';
const BREAKDOWN_TOOLS = BREAKDOWNS;
const FILTERED = 'Filters: filter_<dimension> = "op:value1,value2" (values OR-ed, filters AND-ed, op is, is_not, contains or does_not_contain: a substring, case ignored; on country the ISO code), e.g. filter_country: "is:US,DE".';
const PAGED = `${FILTERED} Answers pagination {limit, offset, total} beside data.`;

function read(tool: string, note?: string): OperationEntry {
  const website = 'websiteId takes the id or the trackingId; a website API key (df_) may leave it out.';
  return { tool, permission: 'analytics:read', kind: 'read', note: note ? `${website} ${note}` : website };
}

export const OPERATIONS: Record<OperationKey, OperationEntry> = {
  [`GET ${A}/account`]: { tool: 'account_get', permission: 'analytics:read', kind: 'read' },
  [`PUT ${A}/account`]: { tool: 'account_update', permission: 'analytics:read', kind: 'write' },

  [`GET ${A}/access-tokens`]: { tool: 'tokens_list', permission: 'api-keys:read', kind: 'read' },
  [`POST ${A}/access-tokens`]: { tool: 'token_create', permission: 'api-keys:write', kind: 'credential' },
  [`DELETE ${A}/access-tokens/{tokenId}`]: { tool: 'token_revoke', permission: 'api-keys:write', kind: 'destroy' },

  [`GET ${A}/websites`]: { tool: 'websites_list', permission: 'websites:read', kind: 'read' },
  [`POST ${A}/websites`]: { tool: 'website_create', permission: 'websites:write', kind: 'write' },
  [`GET ${W}`]: { tool: 'website_get', permission: 'settings:read', kind: 'read' },
  [`PUT ${W}`]: { tool: 'website_update', permission: 'settings:write', kind: 'write' },
  [`DELETE ${W}`]: { tool: 'website_delete', permission: 'websites:write', kind: 'destroy' },
  [`GET ${W}/derived-data`]: { tool: 'website_derived_data', permission: 'settings:read', kind: 'read' },

  [`GET ${W}/apikeys`]: { tool: 'apikeys_list', permission: 'api-keys:read', kind: 'read' },
  [`POST ${W}/apikeys`]: { tool: 'apikey_create', permission: 'api-keys:write', kind: 'credential' },
  [`PUT ${W}/apikeys/{apiKeyId}`]: { tool: 'apikey_roll', permission: 'api-keys:write', kind: 'credential', alsoDestroys: true },
  [`DELETE ${W}/apikeys/{apiKeyId}`]: { tool: 'apikey_revoke', permission: 'api-keys:write', kind: 'destroy' },

  [`GET ${W}/goals`]: { tool: 'goals_list', permission: 'settings:read', kind: 'read' },
  [`GET ${W}/goals/customizations`]: { tool: 'goal_customizations_list', permission: 'goals:read', kind: 'read' },
  [`PATCH ${W}/goals/customizations`]: { tool: 'goal_customize', permission: 'goals:write', kind: 'write' },
  [`DELETE ${W}/goals/customizations`]: { tool: 'goal_customization_reset', permission: 'goals:write', kind: 'destroy' },

  [`GET ${W}/funnels`]: { tool: 'funnels_list', permission: 'funnels:read', kind: 'read' },
  [`POST ${W}/funnels`]: { tool: 'funnel_create', permission: 'funnels:write', kind: 'write' },
  [`PUT ${W}/funnels/{funnelId}`]: { tool: 'funnel_update', permission: 'funnels:write', kind: 'write' },
  [`DELETE ${W}/funnels/{funnelId}`]: { tool: 'funnel_delete', permission: 'funnels:write', kind: 'destroy' },

  [`GET ${W}/alerts`]: { tool: 'alerts_list', permission: 'alerts:read', kind: 'read' },
  [`POST ${W}/alerts`]: { tool: 'alert_create', permission: 'alerts:write', kind: 'write' },
  [`PUT ${W}/alerts/{alertId}`]: { tool: 'alert_update', permission: 'alerts:write', kind: 'write' },
  [`DELETE ${W}/alerts/{alertId}`]: { tool: 'alert_delete', permission: 'alerts:write', kind: 'destroy' },
  [`GET ${W}/alerts/history`]: { tool: 'alerts_history', permission: 'alerts:read', kind: 'read' },

  [`GET ${W}/team`]: { tool: 'team_list', permission: 'team:read', kind: 'read' },
  [`POST ${W}/team`]: { tool: 'team_invite', permission: 'team:write', kind: 'write', note: OWNER_ONLY },
  [`DELETE ${W}/team`]: { tool: 'team_remove', permission: 'team:write', kind: 'destroy', note: OWNER_ONLY },

  [`GET ${A}/invitations`]: { tool: 'invitations_list', permission: 'websites:read', kind: 'read' },
  [`POST ${A}/invitations/{invitationId}/accept`]: { tool: 'invitation_accept', permission: 'websites:write', kind: 'write' },

  [`GET ${W}/shared-links`]: { tool: 'shared_links_list', permission: 'settings:read', kind: 'read' },
  [`POST ${W}/shared-links`]: {
    tool: 'shared_link_create',
    permission: 'settings:write',
    kind: 'credential',
    note: 'The link opens only while the website setting isPublicDashboardEnabled is true (website_update).',
  },
  [`PUT ${W}/shared-links/{sharedLinkId}`]: { tool: 'shared_link_update', permission: 'settings:write', kind: 'write' },
  [`DELETE ${W}/shared-links/{sharedLinkId}`]: { tool: 'shared_link_revoke', permission: 'settings:write', kind: 'destroy' },

  [`POST ${W}/imports`]: {
    tool: 'import_create',
    permission: 'settings:write',
    kind: 'write',
    note: "Send the zip Plausible exports, or Sightline's own raw export (NDJSON or its gzip), as zipBase64; the import runs in the background: poll import_get for its progress and report.",
  },
  [`POST ${W}/imports/umami/websites`]: {
    tool: 'import_umami_websites',
    permission: 'settings:write',
    kind: 'write',
    note: "Lists the websites of the Umami database at databaseUrl (PostgreSQL; a host the operator allows), to pick the umamiWebsiteId of import_umami_create. Stores nothing.",
  },
  [`POST ${W}/imports/umami`]: {
    tool: 'import_umami_create',
    permission: 'settings:write',
    kind: 'write',
    note: 'Reads one Umami website from its database into this website in the background: poll import_get for its progress (days read) and report.',
  },
  [`GET ${W}/imports`]: { tool: 'imports_list', permission: 'settings:read', kind: 'read' },
  [`GET ${W}/imports/{importId}`]: { tool: 'import_get', permission: 'settings:read', kind: 'read' },
  [`DELETE ${W}/imports/{importId}`]: { tool: 'import_delete', permission: 'settings:write', kind: 'destroy' },
  [`GET ${W}/notes`]: { tool: 'notes_list', permission: 'notes:read', kind: 'read' },
  [`POST ${W}/notes`]: { tool: 'note_create', permission: 'notes:write', kind: 'write' },
  [`PUT ${W}/notes/{noteId}`]: { tool: 'note_update', permission: 'notes:write', kind: 'write' },
  [`DELETE ${W}/notes/{noteId}`]: { tool: 'note_delete', permission: 'notes:write', kind: 'destroy' },

  [`GET ${W}/segments`]: { tool: 'segments_list', permission: 'segments:read', kind: 'read' },
  [`POST ${W}/segments`]: { tool: 'segment_create', permission: 'segments:write', kind: 'write', note: 'Sharing takes the owner or member role.' },
  [`PUT ${W}/segments/{segmentId}`]: { tool: 'segment_update', permission: 'segments:write', kind: 'write', note: SEGMENT_EDITORS },
  [`DELETE ${W}/segments/{segmentId}`]: { tool: 'segment_delete', permission: 'segments:write', kind: 'destroy', note: SEGMENT_EDITORS },

  [`GET ${W}/integrations`]: { tool: 'integrations_status', permission: 'settings:read', kind: 'read' },
  ...Object.fromEntries(
    CONNECTABLE.map((n) => [
      `POST ${W}/integrations/provider-${n}`,
      { tool: `integration_connect_provider_${n}`, permission: 'settings:write', kind: 'write' },
    ]),
  ),
  ...Object.fromEntries(
    PROVIDERS.map((n) => [
      `DELETE ${W}/integrations/provider-${n}`,
      { tool: `integration_disconnect_provider_${n}`, permission: 'settings:write', kind: 'destroy' },
    ]),
  ),
  [`PATCH ${W}/integrations/provider-four`]: { tool: 'integration_resync_provider_four', permission: 'settings:write', kind: 'write' },
  ...Object.fromEntries(
    PROVIDERS.map((n) => [
      `PUT ${W}/integrations/provider-${n}/webhook`,
      {
        tool: `integration_webhook_secret_provider_${n}`,
        permission: 'settings:write',
        kind: 'write',
        note: 'The secret is stored encrypted and never returned; the status shows the webhook URL to paste into the provider.',
      },
    ]),
  ),
  ...Object.fromEntries(
    CONNECTABLE.map((n) => [
      `POST ${W}/integrations/provider-${n}/resync`,
      { tool: `integration_resync_history_provider_${n}`, permission: 'settings:write', kind: 'write' },
    ]),
  ),

  [`GET ${W}/currency-rates`]: { tool: 'currency_rates_list', permission: 'settings:read', kind: 'read' },
  [`PUT ${W}/currency-rates/{currency}`]: { tool: 'currency_rate_set', permission: 'settings:write', kind: 'write' },
  [`DELETE ${W}/currency-rates/{currency}`]: { tool: 'currency_rate_delete', permission: 'settings:write', kind: 'destroy' },

  [`GET ${W}/mail-reports`]: { tool: 'mail_reports_get', permission: 'analytics:read', kind: 'read' },
  [`PUT ${W}/mail-reports`]: {
    tool: 'mail_reports_set',
    permission: 'analytics:read',
    kind: 'write',
    note: "Changes the caller's own subscription only; the website's switches are sendWeeklyReports and sendViralTrafficAlerts of website_update.",
  },

  [`GET /api/v1/analytics/timeseries`]: {
    tool: 'analytics_timeseries',
    permission: 'analytics:read',
    kind: 'read',
    note: 'A website API key (df_) may leave websiteId out.',
  },

  // The website API's reads: websiteId is the id or the trackingId, left out with a df_ key.
  [`GET ${R}/overview`]: read('analytics_overview', FILTERED),
  ...Object.fromEntries(BREAKDOWN_TOOLS.map((kind) => [`GET ${R}/${kind}`, read(`analytics_${kind.replace(/-/g, '_')}`, PAGED)])),
  [`GET ${R}/goals/properties`]: read('analytics_goal_properties', PAGED),
  [`GET ${R}/realtime`]: read('analytics_realtime'),
  [`GET ${R}/realtime/map`]: read('analytics_realtime_map'),
  [`GET ${R}/metadata`]: read('analytics_metadata'),
  [`GET ${R}/funnels/{funnelId}`]: read('analytics_funnel', FILTERED),
  [`GET /api/v1/visitors`]: read(
    'visitors_list',
    `${FILTERED} Also visitedPage (or page: exact paths, comma-separated), visitedPageContains, completedGoal (or goal) and isCustomer (or hasRevenue; not with completedGoal). Rows {visitorId, lastSeenAt, currentUrl, identity, acquisition}; limit at most 250; answers pagination {limit, offset, total, hasMore}: page while hasMore.`,
  ),
  [`GET /api/v1/visitors/{visitorId}`]: read('visitor_get', 'Answers 404 for a visitor this website has not seen.'),

  // Export (issue 37 item 2): the files come back as text.
  [`GET ${R}/export`]: {
    ...read('analytics_export', `${FILTERED} Answers the text of each CSV file of the zip (overview, timeseries and every breakdown), one after another.`),
    download: 'zip',
  },
  [`GET ${RAW_EXPORT}`]: {
    tool: 'export_raw',
    permission: 'exports:read',
    kind: 'read',
    note: "The caller must own the website. Answers the whole website's NDJSON (docs/export-format.md); for a large website use the CLI's sightline export, which writes it to a file.",
    download: 'text',
  },
};

/** Which operations of the document become tools: the administration API and the website API's reads. */
export function isToolOperation(method: string, path: string): boolean {
  const websiteRead = path.startsWith(`${R}/`) || path === '/api/v1/visitors' || path.startsWith('/api/v1/visitors/');
  return path.startsWith(`${A}/`) || (method.toUpperCase() === 'GET' && (websiteRead || path === RAW_EXPORT));
}
