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
