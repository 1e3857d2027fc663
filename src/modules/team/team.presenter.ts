import type { Role } from '../../auth/policy.ts';
import type { InvitationRow } from './team.repository.ts';

type MemberRow = { id: string; name: string; email: string; role: string; created_at: string };

export function presentMember(row: MemberRow) {
  return { userId: row.id, name: row.name, email: row.email, role: row.role as Role, joinedAt: row.created_at };
}

export function presentPendingInvitation(row: InvitationRow) {
  return { invitationId: row.id, email: row.email, role: row.role, invitedAt: row.created_at };
}

export function presentMyInvitation(row: { id: string; website_id: string; domain: string; role: string; created_at: string }) {
  return { invitationId: row.id, websiteId: row.website_id, domain: row.domain, role: row.role, invitedAt: row.created_at };
}
