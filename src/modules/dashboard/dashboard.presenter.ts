import type { AccountRow } from '../account/account.repository.ts';
import type { DashboardSessionRow } from './sessions.repository.ts';

export function presentSessionInfo(account: AccountRow, session: DashboardSessionRow, csrfToken: string) {
  return {
    account: { id: account.id, email: account.email, name: account.name },
    sessionId: session.id,
    csrfToken,
    signedInAt: new Date(session.signed_in_at).toISOString(),
    expiresAt: new Date(session.expires_at).toISOString(),
  };
}

export function presentDashboardSession(row: DashboardSessionRow, currentSessionId: string) {
  return {
    id: row.id,
    current: row.id === currentSessionId,
    userAgent: row.user_agent,
    createdAt: new Date(row.created_at).toISOString(),
    signedInAt: new Date(row.signed_in_at).toISOString(),
    lastSeenAt: new Date(row.last_seen_at).toISOString(),
    expiresAt: new Date(row.expires_at).toISOString(),
  };
}
