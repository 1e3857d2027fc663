import { WebhookSignatureError, type WebhookHeaders } from './adapter.ts';
import { headerValue } from './fields.ts';
import { assertFresh, digestMatches, hmacSha256, requireSecret } from './signatures.ts';

// The Standard Webhooks scheme (Polar): HMAC-SHA256 over "<webhook-id>.<webhook-timestamp>.<body>",
// sent as space-separated "v1,<base64>" signatures (several while a secret rotates).

const TOLERANCE_SECONDS = 300; // the scheme's reference libraries' window

/**
 * The HMAC key of a secret: its UTF-8 bytes, whole, as Polar's SDK does (validateEvent encodes the
 * secret to base64 before handing it to the Standard Webhooks library, which decodes it back), so
 * a secret an owner chose that happens to start with "whsec_" verifies as Polar signs it too.
 */
function keyOf(secret: string): Buffer {
  return Buffer.from(secret, 'utf8');
}

/** Verifies and returns the webhook-id; throws WebhookSignatureError otherwise. */
export function verifyStandardWebhook(rawBody: Buffer, headers: WebhookHeaders, secret: string, now: Date): string {
  const id = headerValue(headers, 'webhook-id');
  const timestamp = headerValue(headers, 'webhook-timestamp');
  const signatures = headerValue(headers, 'webhook-signature');
  if (id === null || timestamp === null || signatures === null) {
    throw new WebhookSignatureError('the webhook-id, webhook-timestamp or webhook-signature header is missing');
  }
  if (!/^\d+$/.test(timestamp)) throw new WebhookSignatureError('the webhook-timestamp is not a number of seconds');
  assertFresh(Number(timestamp), now, TOLERANCE_SECONDS);
  const expected = hmacSha256(keyOf(requireSecret(secret)), `${id}.${timestamp}.`, rawBody);
  const matches = signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',', 2);
    return version === 'v1' && signature !== undefined && digestMatches(expected, signature, 'base64');
  });
  if (!matches) throw new WebhookSignatureError('no webhook-signature matches the body');
  return id;
}
