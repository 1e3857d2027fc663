import type { MailOutboxTable } from '../db/schema.ts';
import { newId } from '../lib/ids.ts';

/** What a queued mail is about: the website (alerts, invitations) or the account (password resets). */
export interface OutboxMail {
  id?: string;
  websiteId: string | null;
  accountId: string | null;
  alertHistoryId: string | null;
  to: string;
  subject: string;
  text: string;
  /** The HTML part and the List-Unsubscribe URL of a report mail, sealed by the caller like its text. */
  html?: string | null;
  listUnsubscribe?: string | null;
}

/** A mail_outbox row, pending and due at `at`, for the outbox worker to send after the commit. */
export function pendingOutboxRow(mail: OutboxMail, at: string): MailOutboxTable {
  return {
    id: mail.id ?? newId(),
    website_id: mail.websiteId,
    account_id: mail.accountId,
    alert_history_id: mail.alertHistoryId,
    to_address: mail.to,
    subject: mail.subject,
    text: mail.text,
    html: mail.html ?? null,
    list_unsubscribe: mail.listUnsubscribe ?? null,
    status: 'pending',
    attempts: 0,
    next_attempt_at: at,
    last_error: null,
    created_at: at,
    sent_at: null,
  };
}
