import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { notFound } from '../../errors.ts';
import { MAIL_KINDS } from './report-periods.ts';
import { choicesOf, effectiveSubscriptions, setChoice } from './reports.repository.ts';

// The caller's own report mail on a website: what they take, and the website's switches.

async function switchesOf(db: Kysely<Database>, websiteId: string) {
  const website = await db.selectFrom('websites').select(['send_weekly_reports', 'send_viral_traffic_alerts']).where('id', '=', websiteId).executeTakeFirst();
  if (!website) throw notFound('Website not found');
  return website;
}

export async function getSubscription(db: Kysely<Database>, websiteId: string, accountId: string) {
  const website = await switchesOf(db, websiteId);
  // The member's own choices with the defaults; the switches say whether they take effect.
  const choices = effectiveSubscriptions({ send_weekly_reports: true, send_viral_traffic_alerts: true }, await choicesOf(db, websiteId, accountId));
  return { ...choices, sendWeeklyReports: Boolean(website.send_weekly_reports), sendViralTrafficAlerts: Boolean(website.send_viral_traffic_alerts) };
}

export async function updateSubscription(db: Kysely<Database>, websiteId: string, accountId: string, input: { weekly?: boolean; monthly?: boolean; spike?: boolean }) {
  await switchesOf(db, websiteId);
  const at = new Date().toISOString();
  await db.transaction().execute(async (trx) => {
    for (const kind of MAIL_KINDS) {
      const enabled = input[kind];
      if (enabled !== undefined) await setChoice(trx, websiteId, accountId, kind, enabled, at);
    }
  });
  return getSubscription(db, websiteId, accountId);
}
