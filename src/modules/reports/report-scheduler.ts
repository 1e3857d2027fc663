import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { MailReportsConfig } from '../../config.ts';
import type { Keyring } from '../../crypto/keyring.ts';
import type { Database } from '../../db/schema.ts';
import type { StatsDeps } from '../stats/stats.service.ts';
import { renderReportMail, renderSpikeMail } from './report-mail.ts';
import { type ReportKind, latestEndedPeriod } from './report-periods.ts';
import { readReportSummary } from './report-summary.ts';
import { type ReportWebsite, queueReportMail, recipientsWithout, websiteSends, websitesWithMail } from './reports.repository.ts';
import { checkTrafficSpike } from './traffic-spike.ts';

// One pass of the scheduler: for each website with a switch on, the weekly and monthly report of
// the period that ended last (in the website's time zone) for each member who takes it and has
// not had it, and the spike check of the hour that ended last. Everything it decides is in rows
// (mail_report_deliveries, mail_spike_checks), so a pass can run any number of times, on any
// number of instances, after any crash: what was queued is not queued again, what was not is
// queued by the next pass. The time is `now`, passed in (tests pass the instant they want).

export interface ReportDeps {
  db: Kysely<Database>;
  /** The website API's reads (the same numbers as its routes). */
  stats: StatsDeps;
  keyring: Keyring;
  publicUrl: string;
  settings: MailReportsConfig;
  log: FastifyBaseLogger;
}

/** Websites read per query: the pass walks them in pages, so no read holds many rows. */
const WEBSITE_PAGE = 100;

export const unsubscribeUrlOf = (publicUrl: string, token: string) => `${publicUrl}/mail/unsubscribe/${token}`;
export const dashboardUrlOf = (publicUrl: string, websiteId: string) => `${publicUrl}/websites/${websiteId}`;

async function queueReports(deps: ReportDeps, website: ReportWebsite, kind: ReportKind, now: Date): Promise<number> {
  const period = latestEndedPeriod(kind, website.timezone, now);
  if (!period) return 0;
  const recipients = await recipientsWithout(deps.db, website.id, kind, period.from);
  if (recipients.length === 0) return 0;
  const summary = await readReportSummary(deps.stats, website.id, period);
  let queued = 0;
  for (const recipient of recipients) {
    const done = await queueReportMail(deps.db, deps.keyring, { websiteId: website.id, kind, periodStart: period.from, recipient, at: now.toISOString() }, (token) => {
      const unsubscribeUrl = unsubscribeUrlOf(deps.publicUrl, token);
      const mail = renderReportMail({ domain: website.domain, summary, dashboardUrl: dashboardUrlOf(deps.publicUrl, website.id), unsubscribeUrl });
      return { ...mail, unsubscribeUrl };
    });
    if (done) queued += 1;
  }
  return queued;
}

async function queueSpikeAlerts(deps: ReportDeps, website: ReportWebsite, now: Date): Promise<number> {
  const spike = await checkTrafficSpike(deps, website, now);
  if (!spike) return 0;
  const periodStart = spike.hourFrom;
  let queued = 0;
  for (const recipient of await recipientsWithout(deps.db, website.id, 'spike', periodStart)) {
    const done = await queueReportMail(deps.db, deps.keyring, { websiteId: website.id, kind: 'spike', periodStart, recipient, at: now.toISOString() }, (token) => {
      const unsubscribeUrl = unsubscribeUrlOf(deps.publicUrl, token);
      return { ...renderSpikeMail({ ...spike, domain: website.domain, dashboardUrl: dashboardUrlOf(deps.publicUrl, website.id), unsubscribeUrl }), unsubscribeUrl };
    });
    if (done) queued += 1;
  }
  return queued;
}

/** Queues every report and spike mail due at `now`; returns how many mails it queued. */
export async function runMailReports(deps: ReportDeps, now: Date): Promise<number> {
  let queued = 0;
  let afterId = '';
  for (;;) {
    const websites = await websitesWithMail(deps.db, afterId, WEBSITE_PAGE);
    for (const website of websites) {
      try {
        if (websiteSends(website, 'weekly')) {
          queued += await queueReports(deps, website, 'weekly', now);
          queued += await queueReports(deps, website, 'monthly', now);
        }
        if (websiteSends(website, 'spike')) queued += await queueSpikeAlerts(deps, website, now);
      } catch (error) {
        // One website's failure (a read that timed out) does not hold back the others'; the next
        // pass tries it again.
        deps.log.error({ websiteId: website.id, error: error instanceof Error ? error.message : String(error) }, 'reports by mail: a website was skipped');
      }
    }
    if (websites.length < WEBSITE_PAGE) return queued;
    afterId = websites[websites.length - 1]!.id;
  }
}
