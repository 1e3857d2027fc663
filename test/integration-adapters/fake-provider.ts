import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { ProviderError } from '../../src/modules/integrations/adapters/adapter.ts';

// A local stand-in for a provider's API: node:http on 127.0.0.1, a port the system picks, routes
// answering only the documented endpoints an adapter calls. Every request is recorded so a test
// can check what the SDK really sent.

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  authorization: string | null;
}

type Answer = { status: number; body: unknown } | null;
/** May answer later (a promise), for tests that hold a provider's answer back. */
export type Route = (request: RecordedRequest) => Answer | Promise<Answer>;

export interface FakeProvider {
  baseUrl: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startFakeProvider(route: Route): Promise<FakeProvider> {
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const recorded = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, authorization: req.headers.authorization ?? null };
      requests.push(recorded);
      void Promise.resolve(route(recorded)).then((answered) => {
        const answer = answered ?? { status: 404, body: { error: { message: `no route for ${url.pathname}` } } };
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer.body));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A base URL where nothing listens: a port that was just open and is closed again. */
export async function deadBaseUrl(): Promise<string> {
  const fake = await startFakeProvider(() => null);
  await fake.close();
  return fake.baseUrl;
}

/** Awaits a rejection and checks it is a ProviderError of `kind` that never quotes the credentials. */
export async function expectProviderError(promise: Promise<unknown>, kind: ProviderError['kind'], credentials: Record<string, string>): Promise<ProviderError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ProviderError);
  const providerError = error as ProviderError;
  expect(providerError.kind).toBe(kind);
  for (const secret of Object.values(credentials)) {
    if (secret.length >= 8) expect(providerError.message).not.toContain(secret);
  }
  return providerError;
}

/** Three pages of ids, for every provider's paging test. */
export const PAGE_IDS = [
  ['a1', 'a2'],
  ['b1', 'b2'],
  ['c1'],
];
