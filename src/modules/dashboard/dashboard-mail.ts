import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { digestSecret, generateLinkToken } from '../../auth/sessions.ts';
import type { Keyring } from '../../crypto/keyring.ts';
import type { Database } from '../../db/schema.ts';
import { pendingOutboxRow } from '../../mail/outbox-rows.ts';
import { sealMailText } from '../../mail/sealed-text.ts';
import { looksLikeCredential } from '../../http/redaction.ts';
import { newId } from '../../lib/ids.ts';

// The dashboard's mail: password-reset links and invitation links. A link carries its one-time
// token in the URL fragment, which a browser never sends, so it reaches no access log and no
// Referer; only the token's digest is stored beside what it unlocks. The mail is written to
// mail_outbox in the transaction that creates the link and sent by the outbox worker after the
// commit (src/mail/outbox-worker.ts). Its text is stored sealed (src/mail/sealed-text.ts) and is
// not kept at all once sent.

export const PASSWORD_RESET_LIFETIME_MS = 3600_000;
export const INVITATION_LINK_LIFETIME_MS = 14 * 24 * 3600_000;

/** Where mailed links point, whether mail can be sent at all (SMTP_URL set), and the keys that seal it. */
export interface LinkMailSettings {
  publicUrl: string;
  enabled: boolean;
  keyring: Keyring;
}

export function linkMailSettings(app: FastifyInstance): LinkMailSettings {
  return { publicUrl: app.config.publicUrl, enabled: app.config.smtpUrl !== undefined, keyring: app.keyring };
}

/** A new one-time link token and the digest that is stored for it. */
export function newLinkToken(): { token: string; digest: string } {
  let token = generateLinkToken();
  // An invitation's token also travels in a URL path (GET /invitations/{token}), where the log
  // masks a segment only when it reads as random; about one token in 2000 has no digit and would
  // be shown, so such a draw is replaced.
  while (!looksLikeCredential(token)) token = generateLinkToken();
  return { token, digest: digestSecret(token) };
}

export function linkExpired(expiresAt: string | null, now = Date.now()): boolean {
  return expiresAt === null || new Date(expiresAt).getTime() <= now;
}

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();

export function renderPasswordResetMail(input: { name: string; email: string; publicUrl: string; token: string }) {
  const link = `${input.publicUrl}/reset-password#${input.token}`;
  return {
    subject: '[Sightline] Reset your password',
    text:
      `Hello ${oneLine(input.name)},\n\n` +
      `Someone, hopefully you, asked to reset the password of the Sightline account ${input.email} at ${input.publicUrl}.\n\n` +
      `Set a new password here (the link works once, for one hour):\n${link}\n\n` +
      'If you did not ask for it, ignore this e-mail: your password stays as it is.\n',
  };
}

const ROLE_RIGHTS: Record<string, string> = {
  viewer: 'a viewer: you will see its analytics',
  member: 'a member: you will see its analytics and manage its settings, goals, funnels and alerts',
};

export function renderInvitationMail(input: {
  inviterName: string;
  inviterEmail: string;
  domain: string;
  role: string;
  publicUrl: string;
  token: string;
  expiresAt: string;
}) {
  const inviter = oneLine(input.inviterName);
  const link = `${input.publicUrl}/invite#${input.token}`;
  return {
    subject: oneLine(`[Sightline] ${inviter} invited you to ${input.domain}`),
    text:
      'Hello,\n\n' +
      `${inviter} (${input.inviterEmail}) invited you to the website ${input.domain} on Sightline, as ${ROLE_RIGHTS[input.role] ?? input.role}.\n\n` +
      `Accept the invitation here (you sign in, or create your account, on the way):\n${link}\n\n` +
      `The link works until ${input.expiresAt.slice(0, 10)}. If you did not expect this invitation, ignore this e-mail.\n`,
  };
}

/** Queues a link mail for the outbox worker, due now, sealed, inside the caller's transaction. */
export async function queueMail(
  db: Kysely<Database>,
  keyring: Keyring,
  mail: { to: string; subject: string; text: string; websiteId: string | null; accountId: string | null },
): Promise<void> {
  const id = newId();
  const row = pendingOutboxRow({ ...mail, id, alertHistoryId: null, text: sealMailText(keyring, id, mail.text) }, new Date().toISOString());
  await db.insertInto('mail_outbox').values(row).execute();
}
