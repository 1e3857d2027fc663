import type { Kysely } from 'kysely';
import type { Keyring } from '../../crypto/keyring.ts';
import type { Database } from '../../db/schema.ts';
import { newId } from '../../lib/ids.ts';
import { pendingOutboxRow } from '../../mail/outbox-rows.ts';
import { sealMailText } from '../../mail/sealed-text.ts';
import { newLinkToken } from '../dashboard/dashboard-mail.ts';
import type { RenderedMail } from './report-mail.ts';
import type { MailKind } from './report-periods.ts';

// Who gets which report mail, and the rows that make each (website, member, kind, period) mailed
// once. A member's choice is a row of mail_report_subscriptions; without one the default applies:
// weekly and spike mail follow the website's switch (on for its members unless they opted out),
// monthly mail is opt-in. A website's switch off stops the kind for everyone (docs/decisions.md).

export interface ReportWebsite {
  id: string;
  domain: string;
  timezone: string;
  send_weekly_reports: boolean | number;
  send_viral_traffic_alerts: boolean | number;
}

export interface Recipient {
  accountId: string;
  email: string;
}

const DEFAULT_ON: Record<MailKind, boolean> = { weekly: true, monthly: false, spike: true };

/** Whether the website's switch lets `kind` be mailed at all. */
export function websiteSends(website: Pick<ReportWebsite, 'send_weekly_reports' | 'send_viral_traffic_alerts'>, kind: MailKind): boolean {
  return Boolean(kind === 'spike' ? website.send_viral_traffic_alerts : website.send_weekly_reports);
}

/** Websites with either switch on, by id after `afterId`, `limit` at a time. */
export async function websitesWithMail(db: Kysely<Database>, afterId: string, limit: number): Promise<ReportWebsite[]> {
  return db
    .selectFrom('websites')
    .select(['id', 'domain', 'timezone', 'send_weekly_reports', 'send_viral_traffic_alerts'])
    .where((eb) => eb.or([eb('send_weekly_reports', '=', true), eb('send_viral_traffic_alerts', '=', true)]))
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** Each member's own choices on the website, by kind (kinds without a row are left out). */
export async function choicesOf(db: Kysely<Database>, websiteId: string, accountId: string): Promise<Partial<Record<MailKind, boolean>>> {
  const rows = await db
    .selectFrom('mail_report_subscriptions')
    .select(['kind', 'enabled'])
    .where('website_id', '=', websiteId)
    .where('account_id', '=', accountId)
    .execute();
  return Object.fromEntries(rows.map((row) => [row.kind, Boolean(row.enabled)]));
}

/** The member's subscriptions as they take effect: their choice, or the default, under the website's switch. */
export function effectiveSubscriptions(website: Pick<ReportWebsite, 'send_weekly_reports' | 'send_viral_traffic_alerts'>, choices: Partial<Record<MailKind, boolean>>) {
  const on = (kind: MailKind) => websiteSends(website, kind) && (choices[kind] ?? DEFAULT_ON[kind]);
  return { weekly: on('weekly'), monthly: on('monthly'), spike: on('spike') };
}

export async function setChoice(db: Kysely<Database>, websiteId: string, accountId: string, kind: MailKind, enabled: boolean, at: string): Promise<void> {
  await db
    .insertInto('mail_report_subscriptions')
    .values({ website_id: websiteId, account_id: accountId, kind, enabled, updated_at: at })
    .onConflict((oc) => oc.columns(['website_id', 'account_id', 'kind']).doUpdateSet({ enabled, updated_at: at }))
    .execute();
}

/** The website's members who take `kind` and have no mail yet for the period starting at `periodStart`. */
export async function recipientsWithout(db: Kysely<Database>, websiteId: string, kind: MailKind, periodStart: string): Promise<Recipient[]> {
  const rows = await db
    .selectFrom('website_members')
    .innerJoin('accounts', 'accounts.id', 'website_members.account_id')
    .leftJoin('mail_report_subscriptions as s', (join) =>
      join.onRef('s.website_id', '=', 'website_members.website_id').onRef('s.account_id', '=', 'website_members.account_id').on('s.kind', '=', kind),
    )
    .select(['accounts.id as accountId', 'accounts.email as email', 's.enabled as enabled'])
    .where('website_members.website_id', '=', websiteId)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('mail_report_deliveries as d')
            .select('d.id')
            .whereRef('d.website_id', '=', 'website_members.website_id')
            .whereRef('d.account_id', '=', 'website_members.account_id')
            .where('d.kind', '=', kind)
            .where('d.period_start', '=', periodStart),
        ),
      ),
    )
    .orderBy('accounts.id')
    .execute();
  return rows.filter((row) => (row.enabled === null ? DEFAULT_ON[kind] : Boolean(row.enabled))).map(({ accountId, email }) => ({ accountId, email }));
}

export interface QueuedReport {
  websiteId: string;
  kind: MailKind;
  periodStart: string;
  recipient: Recipient;
  at: string;
}

/**
 * Records the delivery and queues its mail in one transaction; does nothing when the period was
 * already queued for the member (another instance, or this one before a restart). The mail's
 * parts carry a new unsubscribe token, whose digest only is stored; they wait sealed.
 */
export async function queueReportMail(
  db: Kysely<Database>,
  keyring: Keyring,
  report: QueuedReport,
  render: (unsubscribeToken: string) => RenderedMail & { unsubscribeUrl: string },
): Promise<boolean> {
  const { token, digest } = newLinkToken();
  const mail = render(token);
  return db.transaction().execute(async (trx) => {
    const inserted = await trx
      .insertInto('mail_report_deliveries')
      .values({
        id: newId(),
        website_id: report.websiteId,
        account_id: report.recipient.accountId,
        kind: report.kind,
        period_start: report.periodStart,
        unsubscribe_digest: digest,
        created_at: report.at,
      })
      .onConflict((oc) => oc.columns(['website_id', 'account_id', 'kind', 'period_start']).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) !== 1) return false;
    const id = newId();
    const row = pendingOutboxRow(
      {
        id,
        websiteId: report.websiteId,
        accountId: report.recipient.accountId,
        alertHistoryId: null,
        to: report.recipient.email,
        subject: mail.subject,
        text: sealMailText(keyring, id, mail.text),
        html: sealMailText(keyring, id, mail.html),
        listUnsubscribe: sealMailText(keyring, id, mail.unsubscribeUrl),
      },
      report.at,
    );
    await trx.insertInto('mail_outbox').values(row).execute();
    return true;
  });
}

/** The delivery an unsubscribe token belongs to, with the website's domain. */
export async function deliveryByDigest(db: Kysely<Database>, digest: string) {
  return db
    .selectFrom('mail_report_deliveries as d')
    .innerJoin('websites', 'websites.id', 'd.website_id')
    .select(['d.website_id as websiteId', 'd.account_id as accountId', 'd.kind as kind', 'websites.domain as domain'])
    .where('d.unsubscribe_digest', '=', digest)
    .executeTakeFirst();
}

/**
 * Claims the spike check of `hour` for the website: true for the one caller (of any instance)
 * that moves checked_hour forward to it.
 */
export async function claimSpikeCheck(db: Kysely<Database>, websiteId: string, hour: string): Promise<{ claimed: boolean; lastSpikeAt: string | null }> {
  // A read first: the pass runs every minute, and only its first in the hour needs to write.
  const known = await db.selectFrom('mail_spike_checks').select(['checked_hour', 'last_spike_at']).where('website_id', '=', websiteId).executeTakeFirst();
  if (known && known.checked_hour >= hour) return { claimed: false, lastSpikeAt: known.last_spike_at };
  const result = await db
    .insertInto('mail_spike_checks')
    .values({ website_id: websiteId, checked_hour: hour, last_spike_at: null })
    .onConflict((oc) =>
      oc
        .column('website_id')
        .doUpdateSet({ checked_hour: hour })
        .where('mail_spike_checks.checked_hour', '<', hour),
    )
    .executeTakeFirst();
  const claimed = Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  const row = await db.selectFrom('mail_spike_checks').select('last_spike_at').where('website_id', '=', websiteId).executeTakeFirst();
  return { claimed, lastSpikeAt: row?.last_spike_at ?? null };
}

export async function recordSpike(db: Kysely<Database>, websiteId: string, at: string): Promise<void> {
  await db.updateTable('mail_spike_checks').set({ last_spike_at: at }).where('website_id', '=', websiteId).execute();
}
