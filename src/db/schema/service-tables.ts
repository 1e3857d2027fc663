import type { Bool } from './values.ts';

// What the server keeps for itself: queued mail, dashboard sessions, reset links, rate-limit
// counters.

/** Persisted outgoing mail (alert e-mails): written with the history row, sent afterwards. */
export interface MailOutboxTable {
  id: string;
  /** The website an alert mail or invitation belongs to; null for account mail. */
  website_id: string | null;
  /** The account a password-reset mail belongs to. */
  account_id: string | null;
  alert_history_id: string | null;
  to_address: string;
  subject: string;
  text: string;
  /** The HTML part (reports by mail), sealed while it waits like a link mail's text; null once sent. */
  html?: string | null;
  /** The List-Unsubscribe URL (reports by mail), sealed while it waits; null once sent. */
  list_unsubscribe?: string | null;
  /** pending | sent | failed */
  status: string;
  attempts: number;
  next_attempt_at: string;
  last_error: string | null;
  created_at: string;
  sent_at: string | null;
}

export interface DashboardSessionsTable {
  id: string;
  account_id: string;
  /** Digest of the cookie's value; the value itself is never stored. */
  digest: string;
  user_agent: string | null;
  created_at: string;
  /** When the password was last entered in this session: deleting a website needs a recent one. */
  signed_in_at: string;
  last_seen_at: string;
  expires_at: string;
  revoked_at: string | null;
}

export interface PasswordResetsTable {
  id: string;
  account_id: string;
  digest: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

/** Rate-limit counters shared by the instances on one PostgreSQL; unused on SQLite. */
export interface RateLimitCountersTable {
  /** A keyed digest of the limiter's key (never a client address or an e-mail address). */
  key: string;
  count: number;
  /** When the key's window ends; a hit after it starts a new window. */
  reset_at: string;
}

/** A member's own choice for one kind of report mail on one website (src/modules/reports). */
export interface MailReportSubscriptionsTable {
  website_id: string;
  account_id: string;
  /** weekly | monthly | spike */
  kind: string;
  enabled: Bool;
  updated_at: string;
}

/** One report mail queued: unique per (website, account, kind, period_start). */
export interface MailReportDeliveriesTable {
  id: string;
  website_id: string;
  account_id: string;
  kind: string;
  /** The period's first instant (ISO UTC): a week's or month's local midnight, a spike's hour. */
  period_start: string;
  /** Digest of the unsubscribe token the mail carries; the token itself is never stored. */
  unsubscribe_digest: string;
  created_at: string;
}

/** Per website: the last hour checked for a traffic spike, and when the last spike was mailed. */
export interface MailSpikeChecksTable {
  website_id: string;
  checked_hour: string;
  last_spike_at: string | null;
}
