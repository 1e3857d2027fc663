import type { AlertHistoryRow, AlertRow } from './alerts.repository.ts';
import {
  ALERT_HISTORY_STATUSES,
  type AlertHistoryCountsView,
  type AlertHistoryStatus,
  type AlertHistoryView,
  type AlertView,
} from './alerts.schemas.ts';

export function presentAlert(row: AlertRow): AlertView {
  return {
    id: row.id,
    _id: row.id,
    websiteId: row.website_id,
    name: row.name,
    trigger: { type: 'goal', goalName: row.goal_name },
    destination: { type: 'email' },
    template: { subject: row.subject, message: row.message },
    isEnabled: Boolean(row.is_enabled),
    lastTriggeredAt: row.last_triggered_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function presentAlertHistory(row: AlertHistoryRow): AlertHistoryView {
  return {
    id: row.id,
    alertId: row.alert_id,
    alertName: row.alert_name,
    goalName: row.goal_name,
    status: row.status as AlertHistoryStatus,
    error: row.error,
    visitorId: row.visitor_id,
    triggeredAt: row.triggered_at,
  };
}

/** Every status appears, zero when no row has it; `total` counts all matching rows. */
export function presentAlertHistoryCounts(groups: { status: string; n: number }[]): AlertHistoryCountsView {
  const counts: AlertHistoryCountsView = { queued: 0, sent: 0, failed: 0, skipped: 0, throttled: 0, total: 0 };
  for (const { status, n } of groups) {
    if ((ALERT_HISTORY_STATUSES as readonly string[]).includes(status)) counts[status as AlertHistoryStatus] += n;
    counts.total += n;
  }
  return counts;
}
