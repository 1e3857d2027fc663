import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './openapi-types.ts';

// The typed client other programs (and the sightline CLI and MCP server) use. Types come from
// the committed openapi.json, so the SDK cannot drift from the server without a failing test.

export type { paths } from './openapi-types.ts';
export type SightlineClient = Client<paths>;

export interface SightlineClientOptions {
  /** The server's base URL, e.g. http://127.0.0.1:3000 (no /api suffix). */
  baseUrl: string;
  /** An account token (dft_...) or a website API key (df_...). */
  token: string;
  fetch?: typeof globalThis.fetch;
}

export function createSightlineClient(options: SightlineClientOptions): SightlineClient {
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: { authorization: `Bearer ${options.token}` },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}
