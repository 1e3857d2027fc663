import { ProviderError, type ProviderErrorKind } from './adapter.ts';

// Provider error texts sometimes quote the key back (Stripe: "Invalid API Key provided:
// rk_test_****abcd"). Every message an adapter builds passes through here, so neither the
// credential nor a provider's masked echo of it reaches a status, a log or a response.

const KEY_SHAPES = [
  /\b[rsp]k_(?:live|test)_[A-Za-z0-9*]+/g, // Stripe keys, masked or not
  /\bpdl_(?:live|sdbx)_[A-Za-z0-9_]+/g, // Paddle API keys
  /\bpolar_[a-z]{2,4}_[A-Za-z0-9]+/g, // Polar access tokens
  /\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g, // JWTs (Lemon Squeezy API keys)
];

export function scrub(text: string, credentials: Record<string, string>): string {
  let scrubbed = text;
  // Longest first, so a value that contains another is removed whole.
  const secrets = Object.values(credentials).filter((value) => value.length >= 4).sort((a, b) => b.length - a.length);
  for (const secret of secrets) scrubbed = scrubbed.split(secret).join('[redacted]');
  for (const shape of KEY_SHAPES) scrubbed = scrubbed.replace(shape, '[redacted]');
  return scrubbed;
}

const WHAT_HAPPENED: Record<ProviderErrorKind, string> = {
  revoked: 'the key was rejected',
  forbidden: 'the key lacks a permission',
  unreachable: 'the provider could not be reached',
  invalid: 'the provider refused the request',
};

/**
 * A ProviderError whose message reads "<what happened> (<status>): <what the provider said>",
 * scrubbed of the credentials.
 */
export function providerError(
  kind: ProviderErrorKind,
  status: number | null,
  providerMessage: string,
  credentials: Record<string, string>,
): ProviderError {
  const said = providerMessage.trim().slice(0, 500) || 'no message';
  const head = status === null ? WHAT_HAPPENED[kind] : `${WHAT_HAPPENED[kind]} (${status})`;
  return new ProviderError(kind, scrub(`${head}: ${said}`, credentials), status);
}

/** The kind an HTTP status means, for providers that answer with plain statuses. */
export function kindOfStatus(status: number): ProviderErrorKind {
  if (status === 401) return 'revoked';
  if (status === 403) return 'forbidden';
  if (status === 408 || status === 429 || status >= 500) return 'unreachable';
  return 'invalid';
}
