import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { resolveClientSettings } from '../cli/client/settings.ts';
import { type Api, createApi } from './api.ts';
import { type Catalogue, buildCatalogue } from './catalogue.ts';
import { executeTool } from './execute.ts';

// `sightline mcp`: the administration API as MCP tools over stdio. The low-level Server takes
// the tools' JSON Schemas as they are (the high-level McpServer wants zod schemas), so the input
// schemas stay the ones generated from the TypeBox route schemas.

export const SERVER_INFO = { name: 'sightline', version: '0.1.0' };

const INSTRUCTIONS = `Sightline's administration API and website analytics as tools: websites, account tokens, website API keys, goals, funnels, alerts, team, invitations, integrations; the overview, time series, breakdowns (analytics_pages, analytics_countries, ...), goal properties, funnel reports, realtime and visitors.
Start with websites_list to learn the website ids that most tools take as websiteId. Each answer is the API's JSON ({"status":"success","data":[...]}); a refused call is an error whose text is the server's message.
Tools that delete, revoke, disconnect or issue a secret do nothing without confirm: true and answer what they would do instead: show that to the user before confirming.`;

/** Where the API is reached for each call: read afresh, so a `sightline login` applies at once. */
export type ApiProvider = () => Api | string;

export function apiFromSettings(env: Record<string, string | undefined> = process.env): ApiProvider {
  return () => {
    const settings = resolveClientSettings(env);
    if (!settings.token) {
      return 'No credential: set SIGHTLINE_TOKEN (and SIGHTLINE_API_BASE) in the MCP server\'s environment, or run "sightline login" first.';
    }
    return createApi({ baseUrl: settings.baseUrl, token: settings.token });
  };
}

export function createMcpServer(catalogue: Catalogue, api: ApiProvider): Server {
  const server = new Server(SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });

  const tools = catalogue.tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
    annotations: tool.annotations,
    _meta: { 'sightline/operation': `${tool.method} ${tool.path}`, 'sightline/permission': tool.entry.permission },
  }));
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));

  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = catalogue.byName.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${JSON.stringify(request.params.name)}; tools/list names them all`);
    let provided: Api | string;
    try {
      provided = api();
    } catch (error) {
      provided = (error as Error).message;
    }
    return executeTool(tool, request.params.arguments, provided);
  });

  return server;
}

/** Serves over stdin/stdout until the client goes away. Only protocol messages reach stdout. */
export async function runMcpServer(): Promise<void> {
  // A stray console.log anywhere in the process would corrupt the protocol stream.
  console.log = console.error;
  console.info = console.error;
  console.debug = console.error;

  const catalogue = buildCatalogue();
  for (const key of catalogue.unnamed) console.error(`sightline mcp: ${key} has no tool name in src/mcp/operations.ts; left out`);
  const server = createMcpServer(catalogue, apiFromSettings());
  server.onerror = (error) => console.error(`sightline mcp: ${error.message}`);
  const transport = new StdioServerTransport();
  process.stdin.once('end', () => {
    void server.close().finally(() => process.exit(0));
  });
  await server.connect(transport);
  console.error(`sightline mcp: serving ${catalogue.tools.length} tools over stdio`);
}
