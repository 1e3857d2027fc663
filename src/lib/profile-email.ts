import { normaliseEmail } from './formats.ts';

/**
 * The e-mail address a visitor profile names, for matching payments to it: its user_id when that
 * is an address (the hosted docs suggest an e-mail as user_id), else its extra field `email`.
 * Lower case, as payments store theirs; null when neither is an address.
 */
export function profileEmailOf(userId: string, metadata: Record<string, unknown> | null): string | null {
  const fromUserId = normaliseEmail(userId);
  if (fromUserId !== null) return fromUserId;
  const field = metadata?.email;
  return typeof field === 'string' ? normaliseEmail(field) : null;
}
