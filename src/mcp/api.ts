import { type SightlineClient, createSightlineClient } from '../../sdk/index.ts';
import type { HttpMethod } from './catalogue.ts';

// The tools call the server through the typed SDK client. The catalogue knows its operations
// only at run time, so the calls go through openapi-fetch's generic `request`, with the same
// base URL, credential header and path and query serialization as every typed call.

export interface ApiRequest {
  method: HttpMethod;
  path: string;
  pathParams?: Record<string, unknown>;
  query?: Record<string, unknown>;
  body?: Record<string, unknown>;
  /** The answer is a file: keep its bytes. */
  binary?: boolean;
}

export interface ApiResponse {
  status: number;
  /** The parsed JSON body, or null when the body is not JSON. */
  body: unknown;
  text: string;
  /** With `binary`, a successful answer's bytes. */
  bytes?: Uint8Array;
}

export type Api = (request: ApiRequest) => Promise<ApiResponse>;

interface GenericClient {
  request(
    method: string,
    path: string,
    init: { params: { path?: Record<string, unknown>; query?: Record<string, unknown> }; body?: unknown; parseAs: 'text' | 'arrayBuffer' },
  ): Promise<{ data?: unknown; error?: unknown; response: Response }>;
}

export class NetworkError extends Error {}

export function createApi(options: { baseUrl: string; token: string }): Api {
  const client: SightlineClient = createSightlineClient(options);
  const generic = client as unknown as GenericClient;
  return async ({ method, path, pathParams, query, body, binary }) => {
    let result: Awaited<ReturnType<GenericClient['request']>>;
    try {
      result = await generic.request(method, path, { params: { path: pathParams, query }, body, parseAs: binary ? 'arrayBuffer' : 'text' });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const reason = cause?.code ?? cause?.message ?? (error as Error).message;
      throw new NetworkError(`Cannot reach the Sightline server at ${options.baseUrl} (${reason})`);
    }
    if (binary && result.response.ok) return { status: result.response.status, body: null, text: '', bytes: new Uint8Array(result.data as ArrayBuffer) };
    const raw = result.response.ok ? result.data : result.error;
    const text = typeof raw === 'string' ? raw : raw === undefined ? '' : JSON.stringify(raw);
    let parsed: unknown = null;
    try {
      parsed = text === '' ? null : JSON.parse(text);
    } catch {
      parsed = null;
    }
    return { status: result.response.status, body: parsed, text };
  };
}

interface ErrorEnvelope {
  status: 'error';
  error: { code?: number; message?: string; details?: Array<{ path?: string; message?: string }> };
}

export function isErrorEnvelope(body: unknown): body is ErrorEnvelope {
  return typeof body === 'object' && body !== null && (body as { status?: unknown }).status === 'error' && 'error' in body;
}

/** The server's own words for a failed call: its message (and field details), or the raw answer. */
export function describeFailure(response: ApiResponse): string {
  if (isErrorEnvelope(response.body)) {
    const { code, message, details } = response.body.error;
    const lines = [`Error ${code ?? response.status}: ${message ?? 'the server gave no message'}`];
    for (const detail of details ?? []) {
      const line = `${detail.path ?? ''}: ${detail.message ?? ''}`;
      if (!lines[0]!.includes(line)) lines.push(`- ${line}`);
    }
    return lines.join('\n');
  }
  const excerpt = response.text.length > 500 ? `${response.text.slice(0, 500)}...` : response.text;
  return `Error ${response.status}: the server answered without the JSON error envelope${excerpt ? `: ${excerpt}` : ''}`;
}

/** The `data` array of a success envelope, or null. */
export function dataOf(response: ApiResponse): Array<Record<string, unknown>> | null {
  if (response.status !== 200 || typeof response.body !== 'object' || response.body === null) return null;
  const data = (response.body as { data?: unknown }).data;
  return Array.isArray(data) ? (data as Array<Record<string, unknown>>) : null;
}
