import type { Kysely } from 'kysely';
import { lockAccount, lockWebsite } from '../../db/locks.ts';
import type { Database } from '../../db/schema.ts';
import { badRequest, conflict, invalidField, notFound } from '../../errors.ts';
import { normaliseEmail } from '../../lib/formats.ts';
import { newId } from '../../lib/ids.ts';
import { findAccount } from '../account/account.repository.ts';
import { INVITATION_LINK_LIFETIME_MS, type LinkMailSettings, newLinkToken, queueMail, renderInvitationMail } from '../dashboard/dashboard-mail.ts';
import { findWebsite } from '../websites/websites.repository.ts';
import { presentMember, presentMyInvitation, presentPendingInvitation } from './team.presenter.ts';
import * as repo from './team.repository.ts';
import type { InviteInput, RemoveInput } from './team.schemas.ts';

const ROLE_ORDER: Record<string, number> = { owner: 0, member: 1, viewer: 2 };

/** Members, the owner first, and the invitations still waiting for an answer. */
export async function listTeam(db: Kysely<Database>, websiteId: string) {
  const members = await repo.listMembers(db, websiteId);
  members.sort((a, b) => (ROLE_ORDER[a.role] ?? 9) - (ROLE_ORDER[b.role] ?? 9));
  const invitations = await repo.listWebsiteInvitations(db, websiteId);
  return { members: members.map(presentMember), invitations: invitations.map(presentPendingInvitation) };
}

function requireEmail(value: string): string {
  const email = normaliseEmail(value);
  if (!email) throw invalidField('body.email', 'must be an e-mail address');
  return email;
}

/**
 * Creates the invitation and, when mail is configured, mails the invited address a link to accept
 * it (valid 14 days; only its token's digest is stored), in the same transaction. The answer
 * never holds the link: only the invited address receives it.
 */
export async function invite(db: Kysely<Database>, websiteId: string, callerId: string, input: InviteInput, mail: LinkMailSettings) {
  const email = requireEmail(input.email);
  const role = input.role ?? 'viewer';
  return db.transaction().execute(async (trx) => {
    await lockWebsite(trx, websiteId);
    const caller = await findAccount(trx, callerId);
    if (!caller) throw notFound('Account not found');
    if (caller.email === email) throw invalidField('body.email', 'you cannot invite yourself');
    if (await repo.findMemberByEmail(trx, websiteId, email)) throw conflict(`${email} is already a member of this website`);
    if (await repo.findInvitationByEmail(trx, websiteId, email)) throw conflict(`${email} has already been invited to this website`);
    const link = newLinkToken();
    const now = Date.now();
    const row: repo.InvitationRow = {
      id: newId(),
      website_id: websiteId,
      email,
      role,
      invited_by: callerId,
      created_at: new Date(now).toISOString(),
      link_digest: link.digest,
      link_expires_at: new Date(now + INVITATION_LINK_LIFETIME_MS).toISOString(),
    };
    await repo.insertInvitation(trx, row);
    const byToken = `POST /api/v1/admin/invitations/${row.id}/accept`;
    if (!mail.enabled) {
      return { invitationId: row.id, email, role, message: `Invitation created: ${email} can accept it with ${byToken} (no e-mail is sent: SMTP_URL is unset on this server)` };
    }
    const website = await findWebsite(trx, websiteId);
    const rendered = renderInvitationMail({
      inviterName: caller.name,
      inviterEmail: caller.email,
      domain: website?.domain ?? websiteId,
      role,
      publicUrl: mail.publicUrl,
      token: link.token,
      expiresAt: row.link_expires_at!,
    });
    await queueMail(trx, mail.keyring, { to: email, ...rendered, websiteId, accountId: null });
    return {
      invitationId: row.id,
      email,
      role,
      message: `Invitation created and e-mailed to ${email} with a link to accept it (valid 14 days); with a token of that address, ${byToken} accepts it too`,
    };
  });
}

export async function remove(db: Kysely<Database>, websiteId: string, input: RemoveInput) {
  if ((input.userId === undefined) === (input.email === undefined)) {
    throw badRequest('Send exactly one of body.userId or body.email', [{ path: 'body', message: 'exactly one of userId or email' }]);
  }
  const email = input.email === undefined ? undefined : requireEmail(input.email);
  return db.transaction().execute(async (trx) => {
    await lockWebsite(trx, websiteId);
    const member = input.userId
      ? await repo.findMemberById(trx, websiteId, input.userId)
      : await repo.findMemberByEmail(trx, websiteId, email!);
    if (member) {
      if (member.role === 'owner') throw badRequest('The owner of a website cannot be removed from its team');
      await repo.deleteMember(trx, websiteId, member.id);
      return { message: 'Member removed', removed: 'member' as const };
    }
    const invitation = email ? await repo.findInvitationByEmail(trx, websiteId, email) : undefined;
    if (!invitation) throw notFound('No member or pending invitation matches');
    await repo.deleteInvitation(trx, invitation.id);
    return { message: 'Invitation withdrawn', removed: 'invitation' as const };
  });
}

async function callerEmail(db: Kysely<Database>, accountId: string): Promise<string> {
  const account = await findAccount(db, accountId);
  if (!account) throw notFound('Account not found');
  return account.email;
}

export async function listMyInvitations(db: Kysely<Database>, accountId: string) {
  const rows = await repo.listInvitationsForEmail(db, await callerEmail(db, accountId));
  return rows.map(presentMyInvitation);
}

export async function accept(db: Kysely<Database>, accountId: string, invitationId: string) {
  return db.transaction().execute(async (trx) => {
    // One accept at a time per account, so a double click cannot insert the membership twice.
    await lockAccount(trx, accountId);
    const invitation = await repo.findInvitationForEmail(trx, invitationId, await callerEmail(trx, accountId));
    if (!invitation) throw notFound('Invitation not found');
    return joinWebsite(trx, accountId, invitation);
  });
}

/**
 * What accepting an invitation does, inside the caller's transaction (an accept by token, or by the
 * mailed link): the account joins the website with the invited role and the invitation goes.
 */
export async function joinWebsite(trx: Kysely<Database>, accountId: string, invitation: repo.InvitationRow) {
  if (await repo.findMemberById(trx, invitation.website_id, accountId)) throw conflict('You are already a member of this website');
  await repo.insertMember(trx, invitation.website_id, accountId, invitation.role, new Date().toISOString());
  await repo.deleteInvitation(trx, invitation.id);
  return { message: `You are now a ${invitation.role} of this website`, websiteId: invitation.website_id, role: invitation.role };
}
