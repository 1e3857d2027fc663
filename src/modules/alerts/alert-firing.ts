import type { Kysely } from 'kysely';
import { prepareListQuery } from '../../db/prepared.ts';
import type { AlertHistoryTable, Database, MailOutboxTable } from '../../db/schema.ts';
import { inChunks } from '../../lib/chunks.ts';
import { pendingOutboxRow } from '../../mail/outbox-rows.ts';
import { newId } from '../../lib/ids.ts';
import { type EventEffectsConfig, type RecordedEvent, isGoal } from '../events/event.types.ts';

// Alerts fire inside the transaction that records their goal events: each firing writes its
// history row, and when an e-mail is due, the rendered mail as a pending mail_outbox row. No
// network I/O happens here; the outbox worker (src/mail) sends after the commit.
//
// History status at firing time:
//   skipped   - mail is not configured (SMTP_URL unset), said in `error`; the cooldown does not apply.
//   throttled - the alert queued an e-mail less than ALERT_COOLDOWN_SECONDS ago.
//   queued    - an e-mail is in the outbox; the worker turns this into `sent` or `failed`.
//   failed    - the website has no owner to write to (nothing is queued).
// alerts.last_triggered_at is the latest firing, whatever its status (the newest history row);
// alerts.last_mailed_at is the time of the last queued e-mail, the cooldown's reference.
//
// Templates: the subject and message may use {{goal}} (goal name), {{website}} (the website's
// domain), {{visitor}} (the visitor id) and {{time}} (the event time, ISO-8601 UTC); other text is
// kept as written. Without a subject: "[Sightline] <alert name>: <goal> on <domain>".

interface MatchingAlert {
  id: string;
  website_id: string;
  name: string;
  goal_name: string;
  subject: string | null;
  message: string;
  domain: string;
}

export interface AlertMailFields {
  goal: string;
  website: string;
  visitor: string;
  time: string;
}

const INSERT_CHUNK = 500;
const MAIL_NOT_CONFIGURED = 'E-mail is not configured on this server (SMTP_URL is unset)';

export function renderTemplate(template: string, fields: AlertMailFields): string {
  return template.replace(/\{\{\s*(goal|website|visitor|time)\s*\}\}/g, (_match, key: keyof AlertMailFields) => fields[key]);
}

/** The e-mail of one firing: subject (one line) and text with a footer naming the alert and website. */
export function renderAlertMail(alert: Pick<MatchingAlert, 'name' | 'subject' | 'message'>, fields: AlertMailFields) {
  const subject = alert.subject ? renderTemplate(alert.subject, fields) : `[Sightline] ${alert.name}: ${fields.goal} on ${fields.website}`;
  const text = `${renderTemplate(alert.message, fields)}\n\n-- \nSent by Sightline for the alert "${alert.name}" on ${fields.website}.\n`;
  return { subject: subject.replace(/\s+/g, ' ').trim(), text };
}

/**
 * The enabled alerts of the goals' websites on the goals' names, oldest first. Prepared once per
 * list length: one item per distinct (website, goal) pair, whose columns make the two IN lists
 * (a batch holds at most a few thousand events, far under the bound-parameter limits).
 */
const enabledAlerts = prepareListQuery(2, (db, pairs: [websiteId: string, goalName: string][]) =>
  db
    .selectFrom('alerts')
    .innerJoin('websites', 'websites.id', 'alerts.website_id')
    .select([
      'alerts.id',
      'alerts.website_id',
      'alerts.name',
      'alerts.goal_name',
      'alerts.subject',
      'alerts.message',
      'websites.domain',
    ])
    .where('alerts.website_id', 'in', pairs.map((pair) => pair[0]))
    .where('alerts.goal_name', 'in', pairs.map((pair) => pair[1]))
    .where('alerts.is_enabled', '=', true)
    .orderBy('alerts.created_at')
    .orderBy('alerts.id'),
);

async function matchingAlerts(trx: Kysely<Database>, goals: RecordedEvent[]): Promise<MatchingAlert[]> {
  const pairs = new Map<string, [string, string]>();
  for (const event of goals) pairs.set(`${event.websiteId}\u0000${event.name!}`, [event.websiteId, event.name!]);
  return enabledAlerts.all(trx, [...pairs.values()]);
}

async function ownerEmails(trx: Kysely<Database>, websiteIds: string[]): Promise<Map<string, string>> {
  const rows = await trx
    .selectFrom('website_members')
    .innerJoin('accounts', 'accounts.id', 'website_members.account_id')
    .select(['website_members.website_id', 'accounts.email'])
    .where('website_members.website_id', 'in', websiteIds)
    .where('website_members.role', '=', 'owner')
    .execute();
  return new Map(rows.map((row) => [row.website_id, row.email]));
}

/**
 * Starts the alert's cooldown unless one is running. A conditional update, so two transactions
 * (two processes on PostgreSQL) cannot both queue: the second waits for the first's row lock and
 * then finds the condition false.
 */
async function startCooldown(trx: Kysely<Database>, alertId: string, now: Date, cooldownSeconds: number): Promise<boolean> {
  const cutoff = new Date(now.getTime() - cooldownSeconds * 1000).toISOString();
  const result = await trx
    .updateTable('alerts')
    .set({ last_mailed_at: now.toISOString() })
    .where('id', '=', alertId)
    .where((eb) => eb.or([eb('last_mailed_at', 'is', null), eb('last_mailed_at', '<=', cutoff)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Moves last_triggered_at to this firing. Only forwards: a transaction that took its clock
 * earlier but commits later must not move it back past a newer firing's history row.
 */
async function markTriggered(trx: Kysely<Database>, alertIds: string[], at: string): Promise<void> {
  await inChunks(alertIds, INSERT_CHUNK, async (ids) => {
    await trx
      .updateTable('alerts')
      .set({ last_triggered_at: at })
      .where('id', 'in', ids)
      .where((eb) => eb.or([eb('last_triggered_at', 'is', null), eb('last_triggered_at', '<', at)]))
      .execute();
  });
}

export async function fireAlertsForGoals(trx: Kysely<Database>, events: RecordedEvent[], effects: EventEffectsConfig): Promise<void> {
  const goals = events.filter(isGoal);
  if (goals.length === 0) return;
  const alerts = await matchingAlerts(trx, goals);
  if (alerts.length === 0) return;

  const now = new Date();
  const at = now.toISOString();
  const owners = effects.mailEnabled ? await ownerEmails(trx, [...new Set(alerts.map((a) => a.website_id))]) : new Map<string, string>();
  // Within one call the clock stands still, so an alert's first decision holds for the rest.
  const mayQueue = new Map<string, boolean>();
  const history: AlertHistoryTable[] = [];
  const outbox: MailOutboxTable[] = [];

  for (const event of goals) {
    for (const alert of alerts) {
      if (alert.website_id !== event.websiteId || alert.goal_name !== event.name) continue;
      const entry: AlertHistoryTable = {
        id: newId(),
        website_id: alert.website_id,
        alert_id: alert.id,
        alert_name: alert.name,
        goal_name: alert.goal_name,
        status: 'skipped',
        error: MAIL_NOT_CONFIGURED,
        visitor_id: event.visitorId,
        triggered_at: at,
      };
      history.push(entry);
      if (!effects.mailEnabled) continue;
      entry.error = null;

      const to = owners.get(alert.website_id);
      if (to === undefined) {
        entry.status = 'failed';
        entry.error = 'The website has no owner to send the alert to';
        continue;
      }
      let queue = mayQueue.get(alert.id);
      if (queue === undefined) {
        queue = await startCooldown(trx, alert.id, now, effects.alertCooldownSeconds);
        // After a queued mail, the rest of this batch is throttled, unless there is no cooldown.
        mayQueue.set(alert.id, queue && effects.alertCooldownSeconds === 0);
      }
      if (!queue) {
        entry.status = 'throttled';
        continue;
      }
      entry.status = 'queued';
      const mail = renderAlertMail(alert, { goal: alert.goal_name, website: alert.domain, visitor: event.visitorId, time: event.occurredAt });
      outbox.push(pendingOutboxRow({ websiteId: alert.website_id, accountId: null, alertHistoryId: entry.id, to, ...mail }, at));
    }
  }

  await inChunks(history, INSERT_CHUNK, async (rows) => void (await trx.insertInto('alert_history').values(rows).execute()));
  await markTriggered(trx, [...new Set(history.map((entry) => entry.alert_id))], at);
  await inChunks(outbox, INSERT_CHUNK, async (rows) => void (await trx.insertInto('mail_outbox').values(rows).execute()));
}
