import { type Insertable, type Kysely, type Selectable, type Updateable } from 'kysely';
import type { AlertHistoryTable, AlertsTable, Database } from '../../db/schema.ts';

export type AlertRow = Selectable<AlertsTable>;
/** A row to insert that is also a full row, so the presenter can answer from it. */
export type NewAlert = AlertRow & Insertable<AlertsTable>;
export type AlertHistoryRow = Selectable<AlertHistoryTable>;
export type AlertChanges = Omit<Updateable<AlertsTable>, 'id' | 'website_id' | 'created_at'>;

const alertsOf = (db: Kysely<Database>, websiteId: string) => db.selectFrom('alerts').where('website_id', '=', websiteId);

export async function listAlerts(db: Kysely<Database>, websiteId: string): Promise<AlertRow[]> {
  return alertsOf(db, websiteId).selectAll().orderBy('created_at').orderBy('id').execute();
}

export async function countAlerts(db: Kysely<Database>, websiteId: string): Promise<number> {
  const row = await alertsOf(db, websiteId).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function findAlert(db: Kysely<Database>, websiteId: string, alertId: string): Promise<AlertRow | undefined> {
  return alertsOf(db, websiteId).selectAll().where('id', '=', alertId).executeTakeFirst();
}

export async function insertAlert(db: Kysely<Database>, row: NewAlert): Promise<void> {
  await db.insertInto('alerts').values(row).execute();
}

export async function updateAlert(db: Kysely<Database>, websiteId: string, alertId: string, changes: AlertChanges): Promise<void> {
  await db.updateTable('alerts').set(changes).where('id', '=', alertId).where('website_id', '=', websiteId).execute();
}

export async function deleteAlert(db: Kysely<Database>, websiteId: string, alertId: string): Promise<boolean> {
  const result = await db.deleteFrom('alerts').where('id', '=', alertId).where('website_id', '=', websiteId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

const historyOf = (db: Kysely<Database>, websiteId: string, alertId: string | undefined) => {
  const query = db.selectFrom('alert_history').where('website_id', '=', websiteId);
  return alertId === undefined ? query : query.where('alert_id', '=', alertId);
};

export async function listAlertHistory(
  db: Kysely<Database>,
  websiteId: string,
  alertId: string | undefined,
  limit: number,
): Promise<AlertHistoryRow[]> {
  return historyOf(db, websiteId, alertId).selectAll().orderBy('triggered_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

export async function countAlertHistoryByStatus(
  db: Kysely<Database>,
  websiteId: string,
  alertId: string | undefined,
): Promise<{ status: string; n: number }[]> {
  const rows = await historyOf(db, websiteId, alertId)
    .select((eb) => ['status', eb.fn.countAll<number>().as('n')])
    .groupBy('status')
    .execute();
  return rows.map((row) => ({ status: row.status, n: Number(row.n) }));
}
