import { ProviderError } from './adapter.ts';
import { asObject, text } from './fields.ts';
import { kindOfStatus, providerError } from './scrub.ts';

// A JSON GET for the providers whose official SDK cannot be used (see lemon-squeezy.ts and
// polar.ts): bearer authentication, a time limit, and failures turned into ProviderErrors.

const TIMEOUT_MS = 20_000;

export async function getJson(url: URL, token: string, credentials: Record<string, string>, accept = 'application/json'): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { Authorization: `Bearer ${token}`, Accept: accept },
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    throw unreachable(url, error, credentials);
  }
  const body: unknown = await response.json().catch(() => null);
  if (!response.ok) throw providerError(kindOfStatus(response.status), response.status, messageOf(body) ?? response.statusText, credentials);
  if (body === null) throw providerError('invalid', response.status, 'the answer was not JSON', credentials);
  return body;
}

export function unreachable(url: URL | string, error: unknown, credentials: Record<string, string>): ProviderError {
  const cause = asObject(asObject(error)?.cause);
  const detail = text(cause?.code) ?? text(cause?.message) ?? (error instanceof Error ? error.message : String(error));
  const origin = typeof url === 'string' ? url : url.origin;
  return providerError('unreachable', null, `${origin}: ${detail}`, credentials);
}

/** The message of the error shapes these APIs answer with (JSON:API errors, FastAPI detail, OAuth). */
function messageOf(body: unknown): string | null {
  const object = asObject(body);
  if (object === null) return null;
  const errors = Array.isArray(object.errors) ? asObject(object.errors[0]) : null;
  if (errors) return text(errors.detail) ?? text(errors.title);
  if (Array.isArray(object.detail)) return text(asObject(object.detail[0])?.msg);
  return text(object.detail) ?? text(object.error_description) ?? text(object.message) ?? text(object.error);
}
