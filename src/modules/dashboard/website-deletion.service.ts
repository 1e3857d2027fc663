import type { Kysely } from 'kysely';
import type { EventLog } from '../events/event-log.ts';
import type { SessionPrincipal } from '../../auth/principal.ts';
import { RECENT_SIGN_IN_MS } from '../../auth/sessions.ts';
import type { Database } from '../../db/schema.ts';
import { forbidden, invalidField, notFound } from '../../errors.ts';
import { normaliseHostname } from '../../lib/formats.ts';
import { deleteWebsite } from '../websites/website-deletion.ts';
import { findWebsite } from '../websites/websites.repository.ts';

/**
 * Deletes a website from the dashboard: the route guard has checked the session and the owner
 * role; here, a password entered within the last minutes and the domain typed again. The deletion
 * itself is the operator's (`sightline admin delete-website`): one transaction, everything the
 * website owns.
 */
export async function deleteWebsiteFromDashboard(db: Kysely<Database>, events: EventLog, caller: SessionPrincipal, websiteId: string, confirmDomain: string) {
  if (Date.now() - new Date(caller.signedInAt).getTime() > RECENT_SIGN_IN_MS) {
    throw forbidden(
      `Deleting a website needs a sign-in within the last ${RECENT_SIGN_IN_MS / 60_000} minutes: re-authenticate (enter your password again) or sign in again, then retry`,
    );
  }
  const website = await findWebsite(db, websiteId);
  if (!website) throw notFound('Website not found');
  if (normaliseHostname(confirmDomain) !== website.domain) {
    throw invalidField('body.confirmDomain', `must be the domain of the website to delete, ${website.domain}`);
  }
  const deleted = await deleteWebsite(db, websiteId);
  if (!deleted) throw notFound('Website not found');
  await events.deleteWebsiteEvents(websiteId);
  return { message: `Deleted the website ${deleted.domain} and everything it held` };
}
