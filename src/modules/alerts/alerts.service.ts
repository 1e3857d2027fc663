import type { Kysely } from 'kysely';
import { lockWebsite } from '../../db/locks.ts';
import type { Database } from '../../db/schema.ts';
import { forbidden, notFound } from '../../errors.ts';
import { newId } from '../../lib/ids.ts';
import { presentAlert, presentAlertHistory, presentAlertHistoryCounts } from './alerts.presenter.ts';
import * as repo from './alerts.repository.ts';
import {
  type AlertHistoryQueryInput,
  type CreateAlertInput,
  HISTORY_DEFAULT_LIMIT,
  HISTORY_MAX_LIMIT,
  type UpdateAlertInput,
} from './alerts.schemas.ts';

export async function listAlerts(db: Kysely<Database>, websiteId: string) {
  return (await repo.listAlerts(db, websiteId)).map(presentAlert);
}

export async function createAlert(db: Kysely<Database>, websiteId: string, input: CreateAlertInput, limit: number) {
  const now = new Date().toISOString();
  const row: repo.NewAlert = {
    id: newId(),
    website_id: websiteId,
    name: input.name,
    goal_name: input.trigger.goalName,
    subject: input.template.subject ?? null,
    message: input.template.message,
    is_enabled: input.isEnabled ?? true,
    last_triggered_at: null,
    last_mailed_at: null,
    created_at: now,
    updated_at: now,
  };
  await db.transaction().execute(async (trx) => {
    await lockWebsite(trx, websiteId);
    if ((await repo.countAlerts(trx, websiteId)) >= limit) {
      throw forbidden(`Alert limit reached: at most ${limit} alerts per website; delete one first`);
    }
    await repo.insertAlert(trx, row);
  });
  return presentAlert(row);
}

/** Only the fields sent change; `destination` is accepted but email is the only kind. */
function alertChanges(input: UpdateAlertInput): repo.AlertChanges {
  const changes: repo.AlertChanges = {};
  if (input.name !== undefined) changes.name = input.name;
  if (input.trigger !== undefined) changes.goal_name = input.trigger.goalName;
  if (input.template?.subject !== undefined) changes.subject = input.template.subject;
  if (input.template?.message !== undefined) changes.message = input.template.message;
  if (input.isEnabled !== undefined) changes.is_enabled = input.isEnabled;
  return changes;
}

export async function updateAlert(db: Kysely<Database>, websiteId: string, alertId: string, input: UpdateAlertInput) {
  return db.transaction().execute(async (trx) => {
    if (!(await repo.findAlert(trx, websiteId, alertId))) throw notFound('Alert not found');
    await repo.updateAlert(trx, websiteId, alertId, { ...alertChanges(input), updated_at: new Date().toISOString() });
    const row = await repo.findAlert(trx, websiteId, alertId);
    if (!row) throw notFound('Alert not found');
    return presentAlert(row);
  });
}

/** The alert's history stays (it carries the alert's name and goal). */
export async function deleteAlert(db: Kysely<Database>, websiteId: string, alertId: string) {
  if (!(await repo.deleteAlert(db, websiteId, alertId))) throw notFound('Alert not found');
  return { message: 'Alert deleted' };
}

/** `alertId` must name an alert of this website; `counts` cover every matching row, not just the page. */
export async function listAlertHistory(db: Kysely<Database>, websiteId: string, query: AlertHistoryQueryInput) {
  const { alertId } = query;
  const limit = Math.min(query.limit ?? HISTORY_DEFAULT_LIMIT, HISTORY_MAX_LIMIT);
  if (alertId !== undefined && !(await repo.findAlert(db, websiteId, alertId))) throw notFound('Alert not found');
  const [rows, groups] = await Promise.all([
    repo.listAlertHistory(db, websiteId, alertId, limit),
    repo.countAlertHistoryByStatus(db, websiteId, alertId),
  ]);
  return { entries: rows.map(presentAlertHistory), counts: presentAlertHistoryCounts(groups) };
}
