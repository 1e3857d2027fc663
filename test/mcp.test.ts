import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERMISSIONS } from '../src/auth/permissions.ts';
import type { Api } from '../src/mcp/api.ts';
import { type ToolDefinition, buildCatalogue } from '../src/mcp/catalogue.ts';
import { executeTool } from '../src/mcp/execute.ts';
import { analyticsFixture } from './helpers/analytics-fixture.ts';
import { type TestApp, useTestApp } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { UNKNOWN_ID, createAccount, createApiKey, createToken, createWebsite } from './helpers/factories.ts';
import { REPO_ROOT } from './helpers/processes.ts';

// `sightline mcp` driven the way an agent's host drives it: the SDK's own Client spawns
// `node bin/sightline.js mcp` and talks to it over stdio, against a real listening server. The
// in-process suites check what every tool claims (its permission, its preview) without paying a
// process start per tool.

const OPENAPI = JSON.parse(readFileSync(join(REPO_ROOT, 'openapi.json'), 'utf8'));
const ADMIN = '/api/v1/admin';
const W = `${ADMIN}/websites/{websiteId}`;
const ANALYTICS = '/api/v1/analytics';
const TIMESERIES = `GET ${ANALYTICS}/timeseries`;

/** The documented, stable tool names (README "Agents (MCP)"): a rename fails here. */
const TOOL_NAMES: Record<string, string> = {
  [`GET ${ADMIN}/account`]: 'account_get',
  [`PUT ${ADMIN}/account`]: 'account_update',
  [`GET ${ADMIN}/access-tokens`]: 'tokens_list',
  [`POST ${ADMIN}/access-tokens`]: 'token_create',
  [`DELETE ${ADMIN}/access-tokens/{tokenId}`]: 'token_revoke',
  [`GET ${ADMIN}/websites`]: 'websites_list',
  [`POST ${ADMIN}/websites`]: 'website_create',
  [`GET ${W}`]: 'website_get',
  [`PUT ${W}`]: 'website_update',
  [`DELETE ${W}`]: 'website_delete',
  [`GET ${W}/derived-data`]: 'website_derived_data',
  [`GET ${W}/apikeys`]: 'apikeys_list',
  [`POST ${W}/apikeys`]: 'apikey_create',
  [`PUT ${W}/apikeys/{apiKeyId}`]: 'apikey_roll',
  [`DELETE ${W}/apikeys/{apiKeyId}`]: 'apikey_revoke',
  [`GET ${W}/shared-links`]: 'shared_links_list',
  [`POST ${W}/shared-links`]: 'shared_link_create',
  [`PUT ${W}/shared-links/{sharedLinkId}`]: 'shared_link_update',
  [`DELETE ${W}/shared-links/{sharedLinkId}`]: 'shared_link_revoke',
  [`GET ${W}/goals`]: 'goals_list',
  [`GET ${W}/goals/customizations`]: 'goal_customizations_list',
  [`PATCH ${W}/goals/customizations`]: 'goal_customize',
  [`DELETE ${W}/goals/customizations`]: 'goal_customization_reset',
  [`GET ${W}/funnels`]: 'funnels_list',
  [`POST ${W}/funnels`]: 'funnel_create',
  [`PUT ${W}/funnels/{funnelId}`]: 'funnel_update',
  [`DELETE ${W}/funnels/{funnelId}`]: 'funnel_delete',
  [`GET ${W}/alerts`]: 'alerts_list',
  [`POST ${W}/alerts`]: 'alert_create',
  [`PUT ${W}/alerts/{alertId}`]: 'alert_update',
  [`DELETE ${W}/alerts/{alertId}`]: 'alert_delete',
  [`GET ${W}/alerts/history`]: 'alerts_history',
  [`GET ${W}/team`]: 'team_list',
  [`POST ${W}/team`]: 'team_invite',
  [`DELETE ${W}/team`]: 'team_remove',
  [`GET ${ADMIN}/invitations`]: 'invitations_list',
  [`POST ${ADMIN}/invitations/{invitationId}/accept`]: 'invitation_accept',
  [`GET ${W}/integrations`]: 'integrations_status',
  [`POST ${W}/integrations/provider-one`]: 'integration_connect_provider_one',
  [`POST ${W}/integrations/provider-two`]: 'integration_connect_provider_two',
  [`POST ${W}/integrations/provider-three`]: 'integration_connect_provider_three',
  [`POST ${W}/integrations/provider-four`]: 'integration_connect_provider_four',
  [`PATCH ${W}/integrations/provider-four`]: 'integration_resync_provider_four',
  ...Object.fromEntries(['one', 'two', 'three', 'four', 'five', 'six'].map((n) => [`PUT ${W}/integrations/provider-${n}/webhook`, `integration_webhook_secret_provider_${n}`])),
  ...Object.fromEntries(['one', 'two', 'three', 'four'].map((n) => [`POST ${W}/integrations/provider-${n}/resync`, `integration_resync_history_provider_${n}`])),
  [`GET ${W}/currency-rates`]: 'currency_rates_list',
  [`PUT ${W}/currency-rates/{currency}`]: 'currency_rate_set',
  [`DELETE ${W}/currency-rates/{currency}`]: 'currency_rate_delete',
  [`GET ${W}/mail-reports`]: 'mail_reports_get',
  [`PUT ${W}/mail-reports`]: 'mail_reports_set',
  [`DELETE ${W}/integrations/provider-one`]: 'integration_disconnect_provider_one',
  [`DELETE ${W}/integrations/provider-two`]: 'integration_disconnect_provider_two',
  [`DELETE ${W}/integrations/provider-three`]: 'integration_disconnect_provider_three',
  [`DELETE ${W}/integrations/provider-four`]: 'integration_disconnect_provider_four',
  [`DELETE ${W}/integrations/provider-five`]: 'integration_disconnect_provider_five',
  [`DELETE ${W}/integrations/provider-six`]: 'integration_disconnect_provider_six',
  [`POST ${W}/imports`]: 'import_create',
  [`POST ${W}/imports/umami/websites`]: 'import_umami_websites',
  [`POST ${W}/imports/umami`]: 'import_umami_create',
  [`GET ${W}/imports`]: 'imports_list',
  [`GET ${W}/imports/{importId}`]: 'import_get',
  [`DELETE ${W}/imports/{importId}`]: 'import_delete',
  [`GET ${W}/notes`]: 'notes_list',
  [`POST ${W}/notes`]: 'note_create',
  [`PUT ${W}/notes/{noteId}`]: 'note_update',
  [`DELETE ${W}/notes/{noteId}`]: 'note_delete',
  [`GET ${W}/segments`]: 'segments_list',
  [`POST ${W}/segments`]: 'segment_create',
  [`PUT ${W}/segments/{segmentId}`]: 'segment_update',
  [`DELETE ${W}/segments/{segmentId}`]: 'segment_delete',
  [TIMESERIES]: 'analytics_timeseries',
  [`GET ${ANALYTICS}/overview`]: 'analytics_overview',
  [`GET ${ANALYTICS}/pages`]: 'analytics_pages',
  [`GET ${ANALYTICS}/entry-pages`]: 'analytics_entry_pages',
  [`GET ${ANALYTICS}/exit-pages`]: 'analytics_exit_pages',
  [`GET ${ANALYTICS}/referrers`]: 'analytics_referrers',
  [`GET ${ANALYTICS}/campaigns`]: 'analytics_campaigns',
  [`GET ${ANALYTICS}/countries`]: 'analytics_countries',
  [`GET ${ANALYTICS}/regions`]: 'analytics_regions',
  [`GET ${ANALYTICS}/cities`]: 'analytics_cities',
  [`GET ${ANALYTICS}/devices`]: 'analytics_devices',
  [`GET ${ANALYTICS}/browsers`]: 'analytics_browsers',
  [`GET ${ANALYTICS}/operating-systems`]: 'analytics_operating_systems',
  [`GET ${ANALYTICS}/hostnames`]: 'analytics_hostnames',
  [`GET ${ANALYTICS}/goals`]: 'analytics_goals',
  [`GET ${ANALYTICS}/exit-clicks`]: 'analytics_exit_clicks',
  [`GET ${ANALYTICS}/goals/properties`]: 'analytics_goal_properties',
  [`GET ${ANALYTICS}/realtime`]: 'analytics_realtime',
  [`GET ${ANALYTICS}/realtime/map`]: 'analytics_realtime_map',
  [`GET ${ANALYTICS}/metadata`]: 'analytics_metadata',
  [`GET ${ANALYTICS}/funnels/{funnelId}`]: 'analytics_funnel',
  ['GET /api/v1/visitors']: 'visitors_list',
  ['GET /api/v1/visitors/{visitorId}']: 'visitor_get',
  [`GET ${ANALYTICS}/export`]: 'analytics_export',
  ['GET /api/v1/export/raw']: 'export_raw',
};

/** Tools that destroy something or issue a credential: they need confirm: true. */
const GATED = [
  'currency_rate_delete',
  'token_create',
  'token_revoke',
  'website_delete',
  'apikey_create',
  'apikey_roll',
  'apikey_revoke',
  'shared_link_create',
  'shared_link_revoke',
  'goal_customization_reset',
  'funnel_delete',
  'alert_delete',
  'note_delete',
  'segment_delete',
  'import_delete',
  'team_remove',
  'integration_disconnect_provider_one',
  'integration_disconnect_provider_two',
  'integration_disconnect_provider_three',
  'integration_disconnect_provider_four',
  'integration_disconnect_provider_five',
  'integration_disconnect_provider_six',
].sort();

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** "METHOD /path" of every administration operation in openapi.json, and every website API read. */
function documentedOperations(): string[] {
  const operations = Object.entries<Record<string, unknown>>(OPENAPI.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((method) => METHODS.includes(method))
      .map((method) => `${method.toUpperCase()} ${path}`),
  );
  const isRead = (key: string) =>
    key.startsWith(`GET ${ANALYTICS}/`) || key === 'GET /api/v1/visitors' || key.startsWith('GET /api/v1/visitors/') || key === 'GET /api/v1/export/raw';
  return operations.filter((key) => key.split(' ')[1]!.startsWith(`${ADMIN}/`) || isRead(key)).sort();
}

function operationOf(key: string): any {
  const [method, path] = key.split(' ') as [string, string];
  return OPENAPI.paths[path]?.[method.toLowerCase()];
}

describe('the MCP tool catalogue', () => {
  const catalogue = buildCatalogue();

  it('has one tool for every administration operation of openapi.json and every website API read, under its documented name', () => {
    expect(catalogue.unnamed).toEqual([]);
    const byOperation = Object.fromEntries(catalogue.tools.map((tool) => [`${tool.method} ${tool.path}`, tool.name]));
    const expected = Object.fromEntries(documentedOperations().map((key) => [key, TOOL_NAMES[key] ?? '(no documented name)']));
    expect(byOperation).toEqual(expected);
    for (const tool of catalogue.tools) expect(tool.name).toMatch(/^[a-z]+(_[a-z]+)*$/);
  });

  it("builds each tool's input from the operation's path and query parameters and body fields, as openapi.json holds them", () => {
    const wrong: string[] = [];
    for (const tool of catalogue.tools) {
      const operation = operationOf(`${tool.method} ${tool.path}`);
      expect(operation, tool.name).toBeDefined();
      const parameters: any[] = operation.parameters ?? [];
      const body = operation.requestBody?.content?.['application/json']?.schema;
      const expectedNames = [
        ...parameters.filter((p) => p.in === 'path').map((p) => p.name),
        ...parameters.filter((p) => p.in === 'query').map((p) => p.name),
        ...Object.keys(body?.properties ?? {}),
        ...(GATED.includes(tool.name) ? ['confirm'] : []),
      ];
      const expectedRequired = [
        ...parameters.filter((p) => p.in === 'path' || p.required).map((p) => p.name),
        ...(body?.required ?? []),
      ];
      const schema = tool.inputSchema;
      if (JSON.stringify(Object.keys(schema.properties)) !== JSON.stringify(expectedNames)) wrong.push(`${tool.name}: properties`);
      if (JSON.stringify([...(schema.required ?? [])].sort()) !== JSON.stringify(expectedRequired.sort())) wrong.push(`${tool.name}: required`);
      if (schema.additionalProperties !== false) wrong.push(`${tool.name}: accepts unknown arguments`);
      for (const [name, fieldSchema] of Object.entries<any>(body?.properties ?? {})) {
        if (JSON.stringify(schema.properties[name]) !== JSON.stringify(fieldSchema)) wrong.push(`${tool.name}: ${name} differs from the body schema`);
      }
      for (const parameter of parameters) {
        const { description, ...rest } = schema.properties[parameter.name] as Record<string, unknown>;
        if (JSON.stringify(rest) !== JSON.stringify(parameter.schema) || description !== (parameter.schema.description ?? parameter.description)) {
          wrong.push(`${tool.name}: ${parameter.name} differs from the parameter`);
        }
      }
    }
    expect(wrong).toEqual([]);
    // One concrete case, stated in full.
    const update = catalogue.byName.get('website_update')!;
    expect(update.inputSchema.required).toEqual(['websiteId']);
    expect(update.inputSchema.properties.timezone).toEqual(operationOf(`PUT ${W}`).requestBody.content['application/json'].schema.properties.timezone);
  });

  it('asks for confirm on exactly the tools that destroy something or issue a credential, and says so in their description and hints', () => {
    const gated = catalogue.tools.filter((tool) => 'confirm' in tool.inputSchema.properties).map((tool) => tool.name);
    expect(gated.sort()).toEqual(GATED);
    for (const tool of catalogue.tools) {
      expect(tool.annotations.readOnlyHint, tool.name).toBe(tool.method === 'GET');
      const destructive = tool.method === 'DELETE' || tool.name === 'apikey_roll';
      expect(tool.annotations.destructiveHint, tool.name).toBe(destructive);
      if (GATED.includes(tool.name)) expect(tool.description, tool.name).toMatch(/without confirm: true nothing is done/);
      expect(tool.description, tool.name).toContain(`Needs the permission ${tool.entry.permission}.`);
      expect(tool.description, tool.name).toContain(`(${tool.method} ${tool.path})`);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// In process: each tool's claims against the real routes, through app.inject.

/** The tools' Api over app.inject, so a suite can call every tool without a process per call. */
function injectApi(t: TestApp, token: string): Api {
  return async ({ method, path, pathParams, query, body }) => {
    const url = path.replace(/\{(\w+)\}/g, (_match, name: string) => encodeURIComponent(String(pathParams?.[name])));
    const stringQuery = Object.fromEntries(Object.entries(query ?? {}).map(([k, v]) => [k, String(v)]));
    const response = await t.request(method, url, { token, body, query: stringQuery });
    return { status: response.status, body: response.body, text: response.raw };
  };
}

const SNAPSHOT_TABLES = [
  'accounts',
  'access_tokens',
  'websites',
  'website_members',
  'api_keys',
  'goal_customizations',
  'funnels',
  'alerts',
  'invitations',
  'integrations',
  'integration_jobs',
  'notes',
  'currency_rates',
  'shared_links',
  'mail_report_subscriptions',
  'segments',
] as const;

/** Every administration row (but the lastUsedAt stamps reads may write), for "nothing changed". */
async function snapshot(t: TestApp): Promise<Record<string, string[]>> {
  const tables: Record<string, string[]> = {};
  for (const table of SNAPSHOT_TABLES) {
    const rows = await t.db.selectFrom(table).selectAll().execute();
    tables[table] = rows.map((row) => JSON.stringify({ ...row, last_used_at: undefined })).sort();
  }
  return tables;
}

describeEachEngine('MCP tools in process', (engine) => {
  const t = useTestApp(engine);
  const catalogue = buildCatalogue();
  const tool = (name: string): ToolDefinition => catalogue.byName.get(name)!;

  it('states for each tool the permission its route enforces', async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const wrong: string[] = [];
    for (const definition of catalogue.tools) {
      const key = `${definition.method} ${definition.path}`;
      expect(operationOf(key), key).toBeDefined();
      const permission = definition.entry.permission;
      const url = definition.path.replace(/\{(\w+)\}/g, (_match, name: string) => (name === 'websiteId' ? website.id : UNKNOWN_ID));
      const query: Record<string, string> = definition.queryParams.includes('websiteId') ? { websiteId: website.id } : {};
      const lacking = await createToken(t, owner, PERMISSIONS.filter((p) => p !== permission));
      const holding = await createToken(t, owner, [permission]);
      const refused = await t.request(definition.method, url, { token: lacking, query });
      if (refused.status !== 403 || refused.body?.error?.message !== `This token lacks the permission ${permission}`) {
        wrong.push(`${definition.name} without ${permission}: ${refused.status} ${refused.raw}`);
      }
      const allowed = await t.request(definition.method, url, { token: holding, query });
      if (/lacks the permission/.test(allowed.raw)) wrong.push(`${definition.name} with only ${permission}: ${allowed.raw}`);
    }
    expect(wrong).toEqual([]);
  });

  it('previews every confirm-gated tool without confirm, naming what it would touch, and changes nothing', async () => {
    const owner = await createAccount(t, 'Preview Owner');
    const website = await createWebsite(t, owner.token);
    const fixtures = await createFixtures(t, owner.token, website.id);
    const api = injectApi(t, owner.token);
    const cases: Record<string, { args: Record<string, unknown>; says: RegExp }> = {
      token_create: { args: { name: 'ci', permissions: ['websites:read'] }, says: /Would create an account token named "ci".*websites:read/ },
      token_revoke: { args: { tokenId: fixtures.tokenId }, says: /Would revoke token .*"spare".*permissions: websites:read/ },
      website_delete: { args: { websiteId: website.id }, says: new RegExp(`delete website ${website.id} \\(${website.domain}\\).*always refuses`) },
      apikey_create: { args: { websiteId: website.id, name: 'deploy' }, says: new RegExp(`API key named "deploy" for website ${website.id} \\(${website.domain}\\)`) },
      apikey_roll: { args: { websiteId: website.id, apiKeyId: fixtures.apiKeyId }, says: /Would roll API key .*"test key".*old secret would stop working/ },
      apikey_revoke: { args: { websiteId: website.id, apiKeyId: fixtures.apiKeyId }, says: /Would revoke API key .*"test key"/ },
      goal_customization_reset: { args: { websiteId: website.id, goalName: 'signup' }, says: /goal "signup".*displayName "Sign up"/ },
      funnel_delete: { args: { websiteId: website.id, funnelId: fixtures.funnelId }, says: /Would delete funnel .*"Checkout", 2 steps/ },
      alert_delete: { args: { websiteId: website.id, alertId: fixtures.alertId }, says: /Would delete alert .*"Big sale", on goal "purchase", enabled/ },
      note_delete: { args: { websiteId: website.id, noteId: fixtures.noteId }, says: /Would delete note .*"Launched pricing"/ },
      shared_link_create: { args: { websiteId: website.id, name: 'Board', password: 'a long password' }, says: /shared dashboard link named "Board" for website .*with a password/ },
      shared_link_revoke: { args: { websiteId: website.id, sharedLinkId: fixtures.sharedLinkId }, says: /Would revoke shared link .*"Investors", shr_\w{4}\.\.\.\w{4}/ },
      segment_delete: { args: { websiteId: website.id, segmentId: fixtures.segmentId }, says: /Would delete segment .*"US visitors", personal/ },
      team_remove: { args: { websiteId: website.id, email: 'guest@example.com' }, says: /withdraw the pending invitation of guest@example.com \(member\)/ },
      integration_disconnect_provider_one: { args: { websiteId: website.id }, says: /Would disconnect provider-one .*connected since \d{4}-/ },
      integration_disconnect_provider_two: { args: { websiteId: website.id }, says: /provider-two is not connected .*change nothing/ },
      integration_disconnect_provider_three: { args: { websiteId: website.id }, says: /provider-three is not connected/ },
      integration_disconnect_provider_four: { args: { websiteId: website.id }, says: /provider-four is not connected/ },
      integration_disconnect_provider_five: { args: { websiteId: website.id }, says: /provider-five is not connected/ },
      integration_disconnect_provider_six: { args: { websiteId: website.id }, says: /provider-six is not connected/ },
      currency_rate_delete: { args: { websiteId: website.id, currency: 'eur' }, says: /Would delete the rate of EUR \(1\.08, set \d{4}-.*count in no report/ },
      import_delete: { args: { websiteId: website.id, importId: UNKNOWN_ID }, says: /Would delete import f+, but .* has no such import: the call would answer 404/ },
    };
    expect(Object.keys(cases).sort()).toEqual(GATED);

    const before = await snapshot(t);
    for (const [name, { args, says }] of Object.entries(cases)) {
      for (const confirm of [undefined, false]) {
        const result = await executeTool(tool(name), confirm === undefined ? args : { ...args, confirm }, api);
        expect(result.isError, name).toBeUndefined();
        expect(result.content[0]!.text, name).toMatch(says);
        expect(result.content[0]!.text, name).toMatch(/Nothing was done\. Call this tool again with the same arguments and confirm: true/);
      }
    }
    expect(await snapshot(t)).toEqual(before);
  });

  it('does what each gated tool previewed once confirm is true', async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const fixtures = await createFixtures(t, owner.token, website.id);
    const api = injectApi(t, owner.token);
    const run = (name: string, args: Record<string, unknown>) => executeTool(tool(name), { ...args, confirm: true }, api);
    const json = (result: { content: Array<{ text: string }> }) => JSON.parse(result.content[0]!.text);

    const created = await run('token_create', { name: 'ci', permissions: ['websites:read'] });
    expect(json(created).data[0]).toMatchObject({ name: 'ci', permissions: ['websites:read'], token: expect.stringMatching(/^dft_/) });
    expect(created.content[1]!.text).toMatch(/shown this once/);
    expect((await t.request('GET', '/api/v1/admin/websites', { token: json(created).data[0].token })).status).toBe(200);

    expect(json(await run('token_revoke', { tokenId: fixtures.tokenId })).data).toEqual([{ message: 'Token revoked' }]);
    const rolled = json(await run('apikey_roll', { websiteId: website.id, apiKeyId: fixtures.apiKeyId })).data[0];
    expect(rolled).toMatchObject({ id: fixtures.apiKeyId, name: 'test key', key: expect.stringMatching(/^df_/) });
    expect(rolled.key).not.toBe(fixtures.apiKey);
    expect(json(await run('apikey_revoke', { websiteId: website.id, apiKeyId: fixtures.apiKeyId })).data).toEqual([{ deleted: true }]);
    expect(json(await run('goal_customization_reset', { websiteId: website.id, goalName: 'signup' })).data).toEqual([
      { deleted: true, goalName: 'signup' },
    ]);
    expect(json(await run('funnel_delete', { websiteId: website.id, funnelId: fixtures.funnelId })).data[0].message).toBeTruthy();
    expect(json(await run('alert_delete', { websiteId: website.id, alertId: fixtures.alertId })).data[0].message).toBeTruthy();
    await run('team_remove', { websiteId: website.id, email: 'guest@example.com' });
    expect(json(await run('integration_disconnect_provider_one', { websiteId: website.id })).data[0]).toMatchObject({ disconnected: true });

    const refused = await run('website_delete', { websiteId: website.id });
    expect(refused.isError).toBe(true);
    expect(refused.content[0]!.text).toMatch(/^Error 403: .*dashboard/);

    expect(await t.db.selectFrom('access_tokens').select('id').where('id', '=', fixtures.tokenId).where('revoked_at', 'is', null).execute()).toEqual([]);
    expect(await t.db.selectFrom('api_keys').select('id').where('id', '=', fixtures.apiKeyId).where('revoked_at', 'is', null).execute()).toEqual([]);
    expect(await t.db.selectFrom('alerts').select('id').where('id', '=', fixtures.alertId).execute()).toEqual([]);
    expect(await t.db.selectFrom('invitations').select('id').where('website_id', '=', website.id).execute()).toEqual([]);
    expect(await t.db.selectFrom('goal_customizations').select('goal_name').where('website_id', '=', website.id).execute()).toEqual([]);
    const funnel = await t.db.selectFrom('funnels').select('is_active').where('id', '=', fixtures.funnelId).executeTakeFirstOrThrow();
    expect(Boolean(funnel.is_active)).toBe(false);
    expect(await t.db.selectFrom('websites').select('id').where('id', '=', website.id).execute()).toHaveLength(1);
  });
});

/** One of each thing a gated tool can remove, on an owner's website. */
async function createFixtures(t: TestApp, token: string, websiteId: string) {
  const ok = async (method: string, url: string, body: unknown) => {
    const response = await t.request(method, url, { token, body });
    expect(response.status, response.raw).toBe(200);
    return response.body.data[0];
  };
  const base = `/api/v1/admin/websites/${websiteId}`;
  const spare = await ok('POST', '/api/v1/admin/access-tokens', { name: 'spare', permissions: ['websites:read'] });
  const apiKey = await createApiKey(t, token, websiteId);
  await ok('PATCH', `${base}/goals/customizations`, { goalName: 'signup', displayName: 'Sign up' });
  const funnel = await ok('POST', `${base}/funnels`, {
    name: 'Checkout',
    steps: [
      { type: 'pageview', url: '/cart' },
      { type: 'goal', goalName: 'purchase' },
    ],
  });
  const alert = await ok('POST', `${base}/alerts`, {
    name: 'Big sale',
    trigger: { goalName: 'purchase' },
    template: { subject: 'Sale', message: 'Someone bought something big.' },
  });
  await ok('POST', `${base}/team`, { email: 'guest@example.com', role: 'member' });
  await ok('POST', `${base}/integrations/provider-one`, { providerOneRestrictedKey: 'rk_test_abc' });
  const note = await ok('POST', `${base}/notes`, { text: 'Launched pricing' });
  const segment = await ok('POST', `${base}/segments`, { name: 'US visitors', filters: { filter_country: 'is:US' } });
  await ok('PUT', `${base}/currency-rates/EUR`, { rate: 1.08 });
  const sharedLink = await ok('POST', `${base}/shared-links`, { name: 'Investors' });
  return { sharedLinkId: sharedLink.id as string, noteId: note.id as string, segmentId: segment.id as string, tokenId: spare.id as string, apiKeyId: apiKey.id as string, apiKey: apiKey.key as string, funnelId: funnel.id as string, alertId: alert.id as string };
}

// ---------------------------------------------------------------------------------------------
// Over stdio: the real process, started by the SDK's own client.

interface Session {
  client: Client;
  stderr: () => string;
  /** Anything the client could not read as protocol (a stray line on stdout, say). */
  protocolErrors: Error[];
}

interface CallResult {
  isError: boolean;
  text: string;
  content: Array<{ type: string; text?: string }>;
}

describeEachEngine('sightline mcp over stdio', (engine) => {
  const t = useTestApp(engine);
  const sessions: Session[] = [];
  let baseUrl: string;
  let home: string;

  beforeAll(async () => {
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    home = mkdtempSync(join(tmpdir(), 'sightline-mcp-'));
  });

  afterAll(async () => {
    await Promise.all(sessions.map((session) => session.client.close().catch(() => {})));
    rmSync(home, { recursive: true, force: true });
  });

  async function start(env: Record<string, string>, homeDir = home): Promise<Session> {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['bin/sightline.js', 'mcp'],
      cwd: REPO_ROOT,
      env: { HOME: homeDir, PATH: process.env.PATH ?? '', ...env },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const client = new Client({ name: 'sightline-test', version: '1.0.0' });
    const session: Session = { client, stderr: () => stderr, protocolErrors: [] };
    client.onerror = (error) => session.protocolErrors.push(error);
    sessions.push(session);
    await client.connect(transport);
    return session;
  }

  async function call(session: Session, name: string, args: Record<string, unknown> = {}): Promise<CallResult> {
    const result = (await session.client.callTool({ name, arguments: args })) as { isError?: boolean; content: CallResult['content'] };
    return { isError: result.isError === true, text: result.content[0]?.text ?? '', content: result.content };
  }

  const json = (result: CallResult) => {
    expect(result.isError, result.text).toBe(false);
    return JSON.parse(result.text);
  };

  it('lists one tool per administration operation and website API read, each with its input schema, and writes only protocol to stdout', { timeout: 60_000 }, async () => {
    const owner = await createAccount(t);
    const session = await start({ SIGHTLINE_API_BASE: baseUrl, SIGHTLINE_TOKEN: owner.token });
    expect(session.client.getServerVersion()).toMatchObject({ name: 'sightline' });
    expect(session.client.getInstructions()).toMatch(/websites_list/);

    const { tools } = await session.client.listTools();
    const operations = tools.map((tool) => String(tool._meta?.['sightline/operation'])).sort();
    expect(operations).toEqual(documentedOperations());
    expect(tools.map((tool) => tool.name).sort()).toEqual(documentedOperations().map((key) => TOOL_NAMES[key]).sort());

    const create = tools.find((tool) => tool.name === 'website_create')!;
    const body = operationOf(`POST ${ADMIN}/websites`).requestBody.content['application/json'].schema;
    expect(create.inputSchema).toEqual({ type: 'object', properties: body.properties, required: body.required, additionalProperties: false });
    expect(create.description).toMatch(/^Create a website\. Needs the permission websites:write\./);
    expect(create.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });

    const revoke = tools.find((tool) => tool.name === 'token_revoke')!;
    expect(revoke.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(revoke.inputSchema.properties).toHaveProperty('confirm');
    expect(tools.find((tool) => tool.name === 'analytics_timeseries')!.inputSchema.required).toEqual(expect.arrayContaining(['fields', 'interval']));

    await call(session, 'account_get');
    expect(session.protocolErrors).toEqual([]);
    expect(session.stderr()).toMatch(/serving \d+ tools over stdio/);
  });

  it('answers read tools with the API JSON, and website_create creates the website', { timeout: 60_000 }, async () => {
    const owner = await createAccount(t, 'Agent Owner');
    const existing = await createWebsite(t, owner.token);
    const session = await start({ SIGHTLINE_API_BASE: baseUrl, SIGHTLINE_TOKEN: owner.token });

    const listed = json(await call(session, 'websites_list'));
    expect(listed.status).toBe('success');
    expect(listed.data).toEqual([expect.objectContaining({ id: existing.id, domain: existing.domain, role: 'owner' })]);
    expect(json(await call(session, 'account_get')).data[0]).toMatchObject({ id: owner.id, name: 'Agent Owner' });

    const created = json(await call(session, 'website_create', { domain: 'agent-made.example.com', timezone: 'America/New_York', name: 'Agent made' }));
    const site = created.data[0];
    expect(site).toMatchObject({ domain: 'agent-made.example.com', timezone: 'America/New_York', name: 'Agent made', currency: 'USD' });
    const row = await t.db.selectFrom('websites').selectAll().where('id', '=', site.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ domain: 'agent-made.example.com', name: 'Agent made' });

    const history = json(await call(session, 'alerts_history', { websiteId: site.id, limit: 5 }));
    expect(history).toMatchObject({ status: 'success', data: [], counts: { total: 0 } });
    const series = json(
      await call(session, 'analytics_timeseries', { websiteId: site.id, fields: 'visitors,pageviews', interval: 'day', startAt: '2026-01-01', endAt: '2026-01-03' }),
    );
    expect(series).toMatchObject({ status: 'success', interval: 'day', timezone: 'America/New_York' });
    expect(series.data.map((bucket: any) => [bucket.timestamp, bucket.visitors, bucket.pageviews])).toEqual([
      ['2026-01-01T00:00:00.000-05:00', 0, 0],
      ['2026-01-02T00:00:00.000-05:00', 0, 0],
      ['2026-01-03T00:00:00.000-05:00', 0, 0],
    ]);
    expect(session.protocolErrors).toEqual([]);
  });

  it("answers the website API reads: the overview over a range and filtered, a filtered breakdown, a visitor, and the server's word on a bad filter", { timeout: 60_000 }, async () => {
    const f = await analyticsFixture(t);
    const session = await start({ SIGHTLINE_API_BASE: baseUrl, SIGHTLINE_TOKEN: f.owner.token });
    const march = { websiteId: f.website.id, startAt: '2026-03-01', endAt: '2026-03-31' };

    expect(json(await call(session, 'analytics_overview', march))).toEqual({
      status: 'success',
      data: [
        {
          visitors: 3,
          sessions: 4,
          pageviews: 6,
          bounce_rate: 50,
          avg_session_duration: 255_000,
          currency: 'USD',
          revenue: 49,
          payments: 1,
          revenue_per_visitor: 16.33,
          conversion_rate: 33.33,
        },
      ],
    });
    const us = json(await call(session, 'analytics_overview', { ...march, fields: 'visitors,pageviews', filter_country: 'is:US' }));
    expect(us.data).toEqual([{ visitors: 2, pageviews: 5 }]);

    // The trackingId names the website too; the filter and the paging reach the route.
    const pages = json(await call(session, 'analytics_pages', { ...march, websiteId: f.website.trackingId, filter_referrer: 'Google', limit: 1 }));
    expect(pages).toEqual({
      status: 'success',
      data: [{ hostname: f.website.domain, path: '/', visitors: 1, pageviews: 1, revenue: 49 }],
      pagination: { limit: 1, offset: 0, total: 2 },
    });

    const visitor = json(await call(session, 'visitor_get', { websiteId: f.website.id, visitorId: 'v1' }));
    expect(visitor.data).toMatchObject({
      visitorId: 'v1',
      identity: { countryCode: 'US', browser: { name: 'Chrome' }, device: { type: 'desktop' } },
      activity: { visitCount: 1, pageViewCount: 2, completedGoals: [{ name: 'signup' }], completedCustomGoals: [{ name: 'signup' }] },
      profile: null,
    });
    const listed = json(await call(session, 'visitors_list', { ...march, limit: 2, isCustomer: false }));
    expect(listed.data.map((row: { visitorId: string; identity: { country: string } }) => [row.visitorId, row.identity.country])).toEqual([
      ['v3', 'US'],
      ['v2', 'DE'],
    ]);
    expect(listed.pagination).toEqual({ limit: 2, offset: 0, total: 2, hasMore: false });
    expect(await call(session, 'visitor_get', { websiteId: f.website.id, visitorId: 'nobody' })).toMatchObject({ isError: true, text: expect.stringMatching(/^Error 404: /) });

    // The exports answer their files as text: each CSV of the zip, and the NDJSON (gzip unpacked).
    const exported = await call(session, 'analytics_export', { ...march, filter_country: 'is:US' });
    expect(exported.isError, exported.text).toBe(false);
    const csv = Object.fromEntries(exported.content.map((item) => [(item.text ?? '').split('\n')[0], item.text]));
    expect(csv['overview.csv']).toMatch(/^overview\.csv\nvisitors,sessions,pageviews,.*\n2,3,5,/s);
    expect(Object.keys(csv)).toHaveLength(16);
    const raw = await call(session, 'export_raw', { websiteId: f.website.id, gzip: true });
    expect(raw.isError, raw.text).toBe(false);
    const lines = raw.text.trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(lines[0]).toMatchObject({ format: 'sightline-export', version: 1 });
    expect(lines.filter((line) => line.type === 'event')).toHaveLength(8);

    const badOperator = await call(session, 'analytics_countries', { ...march, filter_country: 'near:US' });
    expect(badOperator.isError).toBe(true);
    expect(badOperator.text).toMatch(/^Error 400: .*filter_country.*"near" is not an operator/s);
    expect(await call(session, 'analytics_countries', { ...march, filter_colour: 'red' })).toMatchObject({
      isError: true,
      text: 'Invalid arguments for analytics_countries: filter_colour is not an allowed field',
    });
    expect(session.protocolErrors).toEqual([]);
  });

  it('answers a gated tool without confirm with a preview and changes nothing, and does it with confirm: true', { timeout: 60_000 }, async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const key = await createApiKey(t, owner.token, website.id, 'build server');
    const session = await start({ SIGHTLINE_API_BASE: baseUrl, SIGHTLINE_TOKEN: owner.token });
    const args = { websiteId: website.id, apiKeyId: key.id };

    const before = await snapshot(t);
    const previewed = await call(session, 'apikey_revoke', args);
    expect(previewed.isError).toBe(false);
    expect(previewed.text).toMatch(new RegExp(`^Would revoke API key ${key.id} \\("build server", df_`));
    expect(previewed.text).toMatch(/Nothing was done\. Call this tool again with the same arguments and confirm: true to do it\.$/);
    const issued = await call(session, 'token_create', { name: 'never made' });
    expect(issued.text).toMatch(/^Would create an account token named "never made"/);
    expect(await snapshot(t)).toEqual(before);
    expect((await t.request('GET', '/api/v1/admin/account', { token: key.key })).status).toBe(200);

    expect(json(await call(session, 'apikey_revoke', { ...args, confirm: true })).data).toEqual([{ deleted: true }]);
    expect(await t.db.selectFrom('api_keys').select('id').where('id', '=', key.id).where('revoked_at', 'is', null).execute()).toEqual([]);
    expect((await t.request('GET', '/api/v1/admin/account', { token: key.key })).status).toBe(401);
    expect(session.protocolErrors).toEqual([]);
  });

  it('answers an API error and bad arguments as tool errors that say what is wrong, and changes nothing', { timeout: 60_000 }, async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const session = await start({ SIGHTLINE_API_BASE: baseUrl, SIGHTLINE_TOKEN: owner.token });
    const before = await snapshot(t);

    const missing = await call(session, 'website_get', { websiteId: UNKNOWN_ID });
    expect(missing).toMatchObject({ isError: true, text: 'Error 404: Website not found' });
    const conflict = await call(session, 'website_create', { domain: website.domain, timezone: 'Europe/Paris' });
    expect(conflict.isError).toBe(true);
    expect(conflict.text).toMatch(/^Error 409: .*domain/i);
    const refused = await call(session, 'website_delete', { websiteId: website.id, confirm: true });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/^Error 403: .*dashboard/);

    const bad: Array<[string, Record<string, unknown>, string]> = [
      ['website_create', { domain: 'x.example.com' }, 'Invalid arguments for website_create: timezone is required'],
      ['website_create', { domain: 'x.example.com', timezone: 'UTC', color: 'red' }, 'Invalid arguments for website_create: color is not an allowed field'],
      ['website_update', { websiteId: website.id, name: 'x'.repeat(101) }, 'Invalid arguments for website_update: name must NOT have more than 100 characters'],
      ['website_get', { websiteId: 'not-an-id' }, 'Invalid arguments for website_get: websiteId must match pattern "^[0-9a-f]{24}$"'],
      ['alerts_history', { websiteId: website.id, limit: '5' }, 'Invalid arguments for alerts_history: limit must be integer'],
      ['token_revoke', { tokenId: UNKNOWN_ID, confirm: 'yes' }, 'Invalid arguments for token_revoke: confirm must be boolean'],
    ];
    for (const [name, args, message] of bad) expect(await call(session, name, args)).toMatchObject({ isError: true, text: message });
    expect(await snapshot(t)).toEqual(before);

    await expect(call(session, 'websites_delete_all')).rejects.toThrow(/Unknown tool "websites_delete_all"/);
    expect(session.protocolErrors).toEqual([]);
  });

  it('says how to configure a credential when it has none, and uses the one "sightline login" stores', { timeout: 60_000 }, async () => {
    const owner = await createAccount(t);
    await createWebsite(t, owner.token);
    const ownHome = mkdtempSync(join(home, 'login-'));
    const session = await start({}, ownHome);

    const missing = await call(session, 'websites_list');
    expect(missing.isError).toBe(true);
    expect(missing.text).toMatch(/^No credential: set SIGHTLINE_TOKEN .* or run "sightline login" first\.$/);

    // What `sightline login` writes; the server reads it on the next call.
    mkdirSync(join(ownHome, '.config', 'sightline'), { recursive: true });
    writeFileSync(join(ownHome, '.config', 'sightline', 'config.json'), JSON.stringify({ baseUrl, token: owner.token }), { mode: 0o600 });
    expect(json(await call(session, 'websites_list')).data).toHaveLength(1);
    expect(session.protocolErrors).toEqual([]);
  });
});
