import { type SightlineClient, createSightlineClient, type paths } from '../../../sdk/index.ts';
import { type ClientSettings, resolveClientSettings } from './settings.ts';

// The client side of every command: a typed SDK client from the settings, and one way to turn
// what went wrong into a message on stderr and an exit code (1: the API said no or could not be
// reached; 2: the command was used wrongly or cannot run as configured).

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
  }
}

export interface Connection {
  client: SightlineClient;
  settings: ClientSettings & { token: string };
}

const REQUEST_TIMEOUT_MS = 30_000;

export function clientFor(baseUrl: string, token: string): SightlineClient {
  return createSightlineClient({
    baseUrl,
    token,
    fetch: (input, init) => globalThis.fetch(input, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }),
  });
}

/** The client for the configured server and credential; no credential is a usage error. */
export function connect(): Connection {
  let settings: ClientSettings;
  try {
    settings = resolveClientSettings();
  } catch (error) {
    throw new CliError((error as Error).message, 2);
  }
  if (!settings.token) {
    throw new CliError('not logged in: run "sightline login" first, or set SIGHTLINE_TOKEN', 2);
  }
  const connected = { ...settings, token: settings.token };
  return { client: clientFor(connected.baseUrl, connected.token), settings: connected };
}

interface ErrorBody {
  error?: { code?: number; message?: string };
}

/** What openapi-fetch answers: the parsed success body, or the parsed error body. */
interface SdkResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * Awaits an SDK call and returns the success body (the envelope), or throws a CliError with the
 * server's message. Network failures name the server that could not be reached.
 */
export async function call<T>(request: Promise<SdkResult<T>>, baseUrl?: string): Promise<NonNullable<T>> {
  let result: SdkResult<T>;
  try {
    result = await request;
  } catch (error) {
    throw new CliError(unreachable(error, baseUrl), 1);
  }
  const { data, error, response } = result;
  if (error !== undefined || !response.ok || data === undefined || data === null) {
    throw new CliError(apiErrorMessage(response, error), 1);
  }
  return data as NonNullable<T>;
}

function apiErrorMessage(response: Response, error: unknown): string {
  const status = response.status;
  const message =
    typeof error === 'object' && error !== null && typeof (error as ErrorBody).error?.message === 'string'
      ? (error as ErrorBody).error!.message!
      : typeof error === 'string' && error.trim()
        ? error.trim().slice(0, 200)
        : response.statusText || 'unexpected response';
  const hint = status === 401 ? ' (run "sightline login" again, or check SIGHTLINE_TOKEN)' : '';
  return `${message} (HTTP ${status})${hint}`;
}

function unreachable(error: unknown, baseUrl: string | undefined): string {
  const where = baseUrl ? ` ${baseUrl}` : ' the server';
  const err = error as Error & { cause?: { code?: string; message?: string } };
  if (err?.name === 'TimeoutError') return `no answer from${where} within ${REQUEST_TIMEOUT_MS / 1000} s`;
  const detail = err?.cause?.code ?? err?.cause?.message ?? err?.message ?? String(error);
  return `could not reach${where}: ${detail} (is the server running? set SIGHTLINE_API_BASE or "sightline login --base-url")`;
}

/** Wraps a command action: CliErrors and unexpected failures become a message on stderr and an exit code. */
export function action<A extends unknown[]>(run: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await run(...args);
    } catch (error) {
      if (error instanceof CliError) {
        process.stderr.write(`sightline: ${error.message}\n`);
        process.exit(error.exitCode);
      }
      process.stderr.write(`sightline: ${(error as Error)?.message ?? String(error)}\n`);
      process.exit(1);
    }
  };
}

export function usage(message: string): never {
  throw new CliError(message, 2);
}

const ID = /^[0-9a-f]{24}$/;

const websitesByConnection = new WeakMap<Connection, Promise<Array<{ id: string; domain: string }>>>();

/**
 * A website given as its id or its domain. A domain is looked up in the websites list (once per
 * command); a website API key, which may not list websites, can only name its own website.
 */
export async function websiteIdOf(connection: Connection, website: string): Promise<string> {
  const value = website.trim().toLowerCase();
  if (ID.test(value)) return value;
  const { client, settings } = connection;
  if (settings.token.startsWith('df_')) {
    const own = (await call(client.GET('/api/v1/admin/account'), settings.baseUrl)).data[0]?.websiteId;
    if (own) {
      const site = await call(client.GET('/api/v1/admin/websites/{websiteId}', { params: { path: { websiteId: own } } }), settings.baseUrl);
      if (site.data[0]?.domain === value) return own;
    }
    throw new CliError(`this website API key belongs to website ${own ?? '?'}, not to "${website}"`, 1);
  }
  let websites = websitesByConnection.get(connection);
  if (!websites) {
    websites = call(client.GET('/api/v1/admin/websites'), settings.baseUrl).then((body) => body.data);
    websitesByConnection.set(connection, websites);
  }
  const found = (await websites).find((item) => item.domain === value);
  if (!found) throw new CliError(`no website with the domain "${website}" among the websites this token can see`, 1);
  return found.id;
}

type JsonContent<R> = R extends { content: { 'application/json': infer J } } ? J : never;
type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** The success body of an operation, from the SDK types (so a server change that breaks a command fails tsc). */
export type Success<P extends keyof paths, M extends Method> = JsonContent<NonNullable<paths[P][M]> extends { responses: { 200: infer R } } ? R : never>;

/** One item of an operation's `data`. */
export type Item<P extends keyof paths, M extends Method> = Success<P, M> extends { data: Array<infer I> } ? I : never;

/** The JSON request body of an operation. */
export type RequestBody<P extends keyof paths, M extends Method> = JsonContent<
  NonNullable<paths[P][M]> extends { requestBody?: infer B } ? NonNullable<B> : never
>;
