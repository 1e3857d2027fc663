import type { Kysely } from 'kysely';
import { PASSWORD_MIN_LENGTH, hashPassword, verifyPassword } from '../../auth/passwords.ts';
import { digestSecret } from '../../auth/sessions.ts';
import { lockWebsite } from '../../db/locks.ts';
import type { Database } from '../../db/schema.ts';
import { conflict, invalidField, notFound, unauthorized } from '../../errors.ts';
import { type AccountRow, findAccountByEmail } from '../account/account.repository.ts';
import { findInvitationByLinkDigest } from '../team/team.repository.ts';
import { joinWebsite } from '../team/team.service.ts';
import { linkExpired } from './dashboard-mail.ts';
import { insertAccountWithPassword, startSession } from './sessions.service.ts';

// The invitation e-mail's link (/invite#<token>): whoever holds it sees the invitation and accepts
// it by proving they are, or becoming, the account of the invited address. Accepting is the same
// join as an accept by token (team.service joinWebsite), then a sign-in.

async function findLiveInvitation(db: Kysely<Database>, token: string) {
  const invitation = await findInvitationByLinkDigest(db, digestSecret(token));
  return invitation && !linkExpired(invitation.link_expires_at) ? invitation : undefined;
}

export async function describeInvitationLink(db: Kysely<Database>, token: string) {
  const invitation = await findLiveInvitation(db, token);
  if (!invitation) throw notFound('Invitation not found: the link is unknown, has expired or was already used; ask the owner for a new invitation');
  return {
    email: invitation.email,
    websiteDomain: invitation.domain,
    role: invitation.role as 'viewer' | 'member',
    accountExists: (await findAccountByEmail(db, invitation.email)) !== undefined,
  };
}

const invalidLink = () =>
  invalidField('body.token', 'is not a working invitation link: it is unknown, has expired or was already used (ask the owner for a new invitation)');

/**
 * With an account of the invited address: its password. Without: a name and a password for the
 * new account. Then the account joins the website and is signed in (the caller sets the cookie).
 */
export async function acceptInvitationLink(
  db: Kysely<Database>,
  input: { token: string; name?: string; password: string },
  userAgent: string | undefined,
) {
  const invitation = await findLiveInvitation(db, input.token);
  if (!invitation) throw invalidLink();
  const existing = await findAccountByEmail(db, invitation.email);
  let newAccount: { name: string; passwordHash: string } | undefined;
  if (existing) {
    if (!(await verifyPassword(input.password, existing.password_hash))) {
      throw unauthorized(`Wrong password: an account has the address ${invitation.email}, so accepting takes its password (forgot it? reset it from the sign-in page)`);
    }
  } else {
    if (!input.name?.trim()) throw invalidField('body.name', 'is required: no account has the invited address, so accepting creates one');
    if ([...input.password].length < PASSWORD_MIN_LENGTH) {
      throw invalidField('body.password', `must have at least ${PASSWORD_MIN_LENGTH} characters: it becomes the new account's password`);
    }
    newAccount = { name: input.name, passwordHash: await hashPassword(input.password) };
  }

  return db.transaction().execute(async (trx) => {
    // Two accepts of one link at once: the second waits here, then finds the invitation gone.
    await lockWebsite(trx, invitation.website_id);
    const current = await findLiveInvitation(trx, input.token);
    if (!current) throw invalidLink();
    const found = await findAccountByEmail(trx, current.email);
    let account: AccountRow;
    if (newAccount) {
      if (found) throw conflict(`An account with the address ${current.email} was created meanwhile: open the link again and enter its password`);
      account = await insertAccountWithPassword(trx, { email: current.email, ...newAccount });
    } else {
      if (!found || found.id !== existing!.id) throw conflict('The account of the invited address changed meanwhile: open the link again');
      account = found;
    }
    await joinWebsite(trx, account.id, current);
    return startSession(trx, account, userAgent);
  });
}
