import type { JSX } from 'preact';
import { useId, useState } from 'preact/hooks';
import { api, request } from '../../api.ts';
import {
  Card,
  CheckboxField,
  ConfirmDialog,
  Dialog,
  ErrorMessage,
  Loading,
  TableWrap,
  TextAreaField,
  TextField,
  fieldErrors,
  formatDateTime,
  useAsync,
} from '../../components/index.ts';
import { useGoalNames } from './FunnelsSection.tsx';
import type { SectionProps } from './SettingsPage.tsx';

interface Alert {
  id: string;
  name: string;
  trigger: { type: 'goal'; goalName: string };
  template: { subject: string | null; message: string };
  isEnabled: boolean;
  lastTriggeredAt: string | null;
}

interface HistoryEntry {
  id: string;
  alertId: string;
  alertName: string;
  goalName: string;
  status: 'queued' | 'sent' | 'failed' | 'skipped' | 'throttled';
  error: string | null;
  visitorId: string | null;
  triggeredAt: string;
}

type Counts = Record<'queued' | 'sent' | 'failed' | 'skipped' | 'throttled' | 'total', number>;

function AlertEditor({
  alert,
  base,
  goalNames,
  onClose,
  onSaved,
}: {
  alert: Alert | null;
  base: string;
  goalNames: string[];
  onClose: () => void;
  onSaved: () => void;
}): JSX.Element {
  const listId = useId();
  const [name, setName] = useState(alert?.name ?? '');
  const [goalName, setGoalName] = useState(alert?.trigger.goalName ?? '');
  const [subject, setSubject] = useState(alert?.template.subject ?? '');
  const [message, setMessage] = useState(alert?.template.message ?? '');
  const [isEnabled, setIsEnabled] = useState(alert?.isEnabled ?? true);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const fields = fieldErrors(error);

  async function save(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const body = {
      name: name.trim(),
      trigger: { type: 'goal', goalName: goalName.trim() },
      template: { subject: subject.trim() || null, message },
      isEnabled,
    };
    try {
      if (alert) await api.put(`${base}/${alert.id}`, body);
      else await api.post(base, body);
      onSaved();
      onClose();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  }

  return (
    <Dialog open title={alert ? `Edit the alert "${alert.name}"` : 'New alert'} onClose={onClose}>
      <form onSubmit={save} class="stack">
        <TextField label="Name" value={name} onValue={setName} required maxLength={100} error={fields.name} />
        <datalist id={listId}>
          {goalNames.map((goal) => (
            <option key={goal} value={goal} />
          ))}
        </datalist>
        <TextField
          label="When this goal is completed"
          value={goalName}
          onValue={setGoalName}
          required
          maxLength={64}
          list={listId}
          spellcheck={false}
          hint="A goal name: lower case letters, digits, _ : -"
          error={fields['trigger.goalName'] ?? fields.trigger}
        />
        <TextField label="Email subject (optional)" value={subject} onValue={setSubject} maxLength={200} error={fields['template.subject']} />
        <TextAreaField
          label="Email message"
          value={message}
          onValue={setMessage}
          required
          minLength={10}
          maxLength={2000}
          hint="10 to 2,000 characters. The email goes to the website's owner."
          error={fields['template.message'] ?? fields.template}
        />
        <CheckboxField label="Enabled" checked={isEnabled} onChecked={setIsEnabled} />
        <ErrorMessage error={Object.keys(fields).length ? null : error} />
        <div class="dialog-actions">
          <button type="button" class="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="button primary" disabled={busy}>
            {busy ? 'Saving…' : alert ? 'Save alert' : 'Create alert'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

function History({ base, version }: { base: string; version: number }): JSX.Element {
  const history = useAsync(async () => {
    const answer = await request<HistoryEntry>('GET', `${base}/history`, { query: { limit: 50 } });
    return { entries: answer.data, counts: answer.counts as Counts | undefined };
  }, [base, version]);
  return (
    <Card title="History" headingLevel={2}>
      <ErrorMessage error={history.error} onRetry={history.reload} />
      {!history.data && !history.error && <Loading />}
      {history.data && (
        <>
          {history.data.counts && history.data.counts.total > 0 && (
            <p class="muted">
              {history.data.counts.total} in all: {history.data.counts.sent} sent, {history.data.counts.queued} queued,{' '}
              {history.data.counts.failed} failed, {history.data.counts.skipped} skipped, {history.data.counts.throttled} throttled. The 50
              latest:
            </p>
          )}
          {history.data.entries.length === 0 ? (
            <p>No alert has fired yet.</p>
          ) : (
            <TableWrap label="Alert history">
              <table>
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Alert</th>
                    <th scope="col">Goal</th>
                    <th scope="col">Status</th>
                    <th scope="col">Visitor</th>
                  </tr>
                </thead>
                <tbody>
                  {history.data.entries.map((entry) => (
                    <tr key={entry.id}>
                      <td>{formatDateTime(entry.triggeredAt)}</td>
                      <td>{entry.alertName}</td>
                      <td>
                        <code>{entry.goalName}</code>
                      </td>
                      <td>
                        <span class={`status status-${entry.status}`}>{entry.status}</span>
                        {entry.error && <span class="muted small block">{entry.error}</span>}
                      </td>
                      <td>{entry.visitorId ? <code class="truncate">{entry.visitorId}</code> : '–'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableWrap>
          )}
        </>
      )}
    </Card>
  );
}

export function AlertsSection({ website, editable }: SectionProps): JSX.Element {
  const base = `/api/v1/admin/websites/${website.id}/alerts`;
  const alerts = useAsync(() => api.list<Alert>(base), [base]);
  const goalNames = useGoalNames(website.id);
  const [editing, setEditing] = useState<Alert | 'new' | null>(null);
  const [deleting, setDeleting] = useState<Alert | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [version, setVersion] = useState(0);

  async function toggle(alert: Alert) {
    setError(null);
    try {
      const updated = await api.put<Alert>(`${base}/${alert.id}`, { isEnabled: !alert.isEnabled });
      alerts.setData((alerts.data ?? []).map((item) => (item.id === alert.id ? updated : item)));
    } catch (caught) {
      setError(caught);
    }
  }

  return (
    <>
      <Card
        title="Alerts"
        actions={
          editable && (
            <button type="button" class="button primary small" onClick={() => setEditing('new')}>
              New alert
            </button>
          )
        }
      >
        <p class="muted">An alert emails the website's owner when a goal is completed (at most once a minute per alert).</p>
        <ErrorMessage error={alerts.error ?? error} onRetry={alerts.error ? alerts.reload : undefined} />
        {!alerts.data && !alerts.error && <Loading />}
        {alerts.data && alerts.data.length === 0 && <p>No alert yet.</p>}
        {alerts.data && alerts.data.length > 0 && (
          <TableWrap label="Alerts">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Goal</th>
                  <th scope="col">State</th>
                  <th scope="col">Last fired</th>
                  {editable && <th scope="col"><span class="visually-hidden">Actions</span></th>}
                </tr>
              </thead>
              <tbody>
                {alerts.data.map((alert) => (
                  <tr key={alert.id}>
                    <td>{alert.name}</td>
                    <td>
                      <code>{alert.trigger.goalName}</code>
                    </td>
                    <td>{alert.isEnabled ? <span class="status status-sent">enabled</span> : <span class="status">disabled</span>}</td>
                    <td>{alert.lastTriggeredAt ? formatDateTime(alert.lastTriggeredAt) : 'Never'}</td>
                    {editable && (
                      <td class="actions">
                        <button type="button" class="button small" onClick={() => toggle(alert)}>
                          {alert.isEnabled ? 'Disable' : 'Enable'}
                          <span class="visually-hidden"> {alert.name}</span>
                        </button>
                        <button type="button" class="button small" onClick={() => setEditing(alert)}>
                          Edit<span class="visually-hidden"> {alert.name}</span>
                        </button>
                        <button type="button" class="button small danger-text" onClick={() => setDeleting(alert)}>
                          Delete<span class="visually-hidden"> {alert.name}</span>
                        </button>
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        )}
      </Card>
      <History base={base} version={version} />
      {editing && (
        <AlertEditor
          alert={editing === 'new' ? null : editing}
          base={base}
          goalNames={goalNames}
          onClose={() => setEditing(null)}
          onSaved={alerts.reload}
        />
      )}
      <ConfirmDialog
        open={deleting !== null}
        title={`Delete the alert "${deleting?.name ?? ''}"?`}
        message="No more emails will be sent for it. This cannot be undone."
        confirmLabel="Delete alert"
        danger
        onConfirm={async () => {
          await api.delete(`${base}/${deleting!.id}`);
          alerts.reload();
          setVersion((value) => value + 1);
        }}
        onClose={() => setDeleting(null)}
      />
    </>
  );
}
