import type { Kysely } from 'kysely';
import { hashPassword } from '../../auth/passwords.ts';
import { digestSecret } from '../../auth/sessions.ts';
import { lockAccount } from '../../db/locks.ts';
import type { BackgroundTasks } from '../../lib/background-tasks.ts';
import type { Database } from '../../db/schema.ts';
import { forbidden, invalidField } from '../../errors.ts';
import { normaliseEmail } from '../../lib/formats.ts';
import { newId } from '../../lib/ids.ts';
import { findAccountByEmail } from '../account/account.repository.ts';
import {
  type LinkMailSettings,
  PASSWORD_RESET_LIFETIME_MS,
  linkExpired,
  newLinkToken,
  queueMail,
  renderPasswordResetMail,
} from './dashboard-mail.ts';
import * as repo from './password-reset.repository.ts';
import { revokeAllSessions, setPasswordHash } from './sessions.repository.ts';

/** The answer to every reset request, so it does not tell whether an account has the address. */
export const RESET_REQUESTED =
  'If an account has this e-mail address, a link to set a new password is on its way to it; the link works once, for one hour';

/**
 * Mails a reset link to the account with this address, if there is one. Only the newest link of
 * an account works: asking again deletes the earlier links and their mail not sent yet.
 *
 * The answer waits only for what every address costs alike (the checks and the account lookup);
 * the link and its mail are written by a background task after it, so the answer's timing does
 * not tell whether the address has an account. `onQueued` runs after that task's commit.
 */
export async function requestPasswordReset(
  db: Kysely<Database>,
  input: { email: string },
  mail: LinkMailSettings,
  background: BackgroundTasks,
  onQueued: () => void,
): Promise<void> {
  const email = normaliseEmail(input.email);
  if (!email) throw invalidField('body.email', 'must be an e-mail address');
  if (!mail.enabled) {
    throw forbidden('E-mail is not configured on this server (SMTP_URL is unset), so no reset link can be sent: ask its operator');
  }
  const account = await findAccountByEmail(db, email);
  if (!account) return;
  background.run('password reset', async () => {
    await issuePasswordReset(db, account, mail);
    onQueued();
  });
}

async function issuePasswordReset(db: Kysely<Database>, account: { id: string; name: string; email: string }, mail: LinkMailSettings): Promise<void> {
  const { token, digest } = newLinkToken();
  await db.transaction().execute(async (trx) => {
    // Two requests at once: the second waits, then replaces the first's link.
    await lockAccount(trx, account.id);
    const now = Date.now();
    await repo.deletePasswordResets(trx, account.id);
    await repo.deletePendingAccountMail(trx, account.id);
    await repo.insertPasswordReset(trx, {
      id: newId(),
      account_id: account.id,
      digest,
      created_at: new Date(now).toISOString(),
      expires_at: new Date(now + PASSWORD_RESET_LIFETIME_MS).toISOString(),
      used_at: null,
    });
    const rendered = renderPasswordResetMail({ name: account.name, email: account.email, publicUrl: mail.publicUrl, token });
    await queueMail(trx, mail.keyring, { to: account.email, ...rendered, websiteId: null, accountId: account.id });
  });
}

const invalidLink = () => invalidField('body.token', 'is not a working reset link: it is unknown, expired or already used (ask for a new one)');

/** Sets the new password with a reset link; the link is used up and every session of the account ends. */
export async function confirmPasswordReset(db: Kysely<Database>, input: { token: string; password: string }): Promise<void> {
  const reset = await repo.findPasswordReset(db, digestSecret(input.token));
  if (!reset || reset.used_at !== null || linkExpired(reset.expires_at)) throw invalidLink();
  const hash = await hashPassword(input.password);
  await db.transaction().execute(async (trx) => {
    const at = new Date().toISOString();
    // Conditional: of two confirms at once, or a confirm racing a newer request, one wins.
    if (!(await repo.markPasswordResetUsed(trx, reset.id, at))) throw invalidLink();
    await setPasswordHash(trx, reset.account_id, hash, at);
    await revokeAllSessions(trx, reset.account_id, at);
  });
}
