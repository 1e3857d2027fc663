import type { JSX } from 'preact';
import { useId, useState } from 'preact/hooks';
import { api, request } from '../../api.ts';
import { ActionButton, Card, CheckboxField, DataTable, ErrorMessage, Loaded, TextAreaField, TextField, fieldErrors, formatDateTime, useAsync, useConfirm, useSubmit } from '../../components/index.ts';
import { type Goals, Swatch, goalTitle, useGoalCustomizations } from '../../analytics/goal-display.tsx';
import type { SectionProps } from './section-props.ts';
import { type EditorProps, GoalNameList, ItemDialog, useGoalNames } from './shared.tsx';

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

/** A goal as the reports show it: its display name and colour, the raw name beside when renamed. */
function GoalCell({ goalName, goals }: { goalName: string; goals: Goals }): JSX.Element {
  const look = goals.look(goalName);
  const shown = goals.label(goalName);
  return (
    <span class="alert-goal" title={goalTitle(goalName, look)}>
      <Swatch color={look?.color} />
      {shown === goalName ? <code>{goalName}</code> : <span>{shown}</span>}
      {shown !== goalName && <code class="muted small block">{goalName}</code>}
    </span>
  );
}

type Counts = Record<'queued' | 'sent' | 'failed' | 'skipped' | 'throttled' | 'total', number>;

/** The alert form; its goal suggestions show the goals' display names, and send the raw name. */
function AlertEditor({ item: alert, base, goalNames, goals, onClose, onSaved }: EditorProps<Alert> & { goals: Goals }): JSX.Element {
  const listId = useId();
  const [name, setName] = useState(alert?.name ?? '');
  const [goalName, setGoalName] = useState(alert?.trigger.goalName ?? '');
  const [subject, setSubject] = useState(alert?.template.subject ?? '');
  const [message, setMessage] = useState(alert?.template.message ?? '');
  const [isEnabled, setIsEnabled] = useState(alert?.isEnabled ?? true);
  const submit = useSubmit();
  const fields = fieldErrors(submit.error);
  // The display name of the goal typed, when it has one.
  const shownAs = goals.label(goalName.trim()) !== goalName.trim() ? goals.label(goalName.trim()) : null;
  const body = () => ({
    name: name.trim(),
    trigger: { type: 'goal', goalName: goalName.trim() },
    template: { subject: subject.trim() || null, message },
    isEnabled,
  });

  return (
    <ItemDialog
      noun="alert"
      item={alert}
      base={base}
      body={body}
      submit={submit}
      error={Object.keys(fields).length ? null : submit.error}
      onSaved={onSaved}
      onClose={onClose}
    >
      <TextField label="Name" value={name} onValue={setName} required maxLength={100} error={fields.name} />
      <GoalNameList id={listId} goalNames={goalNames} labelOf={goals.label} />
      <TextField
        label="When this goal is completed"
        value={goalName}
        onValue={setGoalName}
        required
        maxLength={64}
        list={listId}
        spellcheck={false}
        hint={`A goal name: lower case letters, digits, _ : -${shownAs ? `. Shown as “${shownAs}” in the reports.` : ''}`}
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
    </ItemDialog>
  );
}

function History({ base, version, goals }: { base: string; version: number; goals: Goals }): JSX.Element {
  const history = useAsync(async () => {
    const answer = await request<HistoryEntry>('GET', `${base}/history`, { query: { limit: 50 } });
    return { entries: answer.data, counts: answer.counts as Counts | undefined };
  }, [base, version]);
  return (
    <Card title="History" headingLevel={2}>
      <Loaded state={history}>
        {({ entries, counts }) => (
          <>
            {counts && counts.total > 0 && (
              <p class="muted">
                {counts.total} in all: {counts.sent} sent, {counts.queued} queued, {counts.failed} failed, {counts.skipped} skipped,{' '}
                {counts.throttled} throttled. The 50 latest:
              </p>
            )}
            {entries.length === 0 ? (
              <p>No alert has fired yet.</p>
            ) : (
              <DataTable label="Alert history" columns={['When', 'Alert', 'Goal', 'Status', 'Visitor']}>
                {entries.map((entry) => (
                  <tr key={entry.id}>
                    <td>{formatDateTime(entry.triggeredAt)}</td>
                    <td>{entry.alertName}</td>
                    <td>
                      <GoalCell goalName={entry.goalName} goals={goals} />
                    </td>
                    <td>
                      <span class={`status status-${entry.status}`}>{entry.status}</span>
                      {entry.error && <span class="muted small block">{entry.error}</span>}
                    </td>
                    <td>{entry.visitorId ? <code class="truncate">{entry.visitorId}</code> : '–'}</td>
                  </tr>
                ))}
              </DataTable>
            )}
          </>
        )}
      </Loaded>
    </Card>
  );
}

export function AlertsSection({ website, editable }: SectionProps): JSX.Element {
  const base = `/api/v1/admin/websites/${website.id}/alerts`;
  const alerts = useAsync(() => api.list<Alert>(base), [base]);
  const goalNames = useGoalNames(website.id);
  const goals = useGoalCustomizations(website.id);
  const [editing, setEditing] = useState<Alert | 'new' | null>(null);
  const [version, setVersion] = useState(0);
  const toggling = useSubmit();
  const deletion = useConfirm((alert: Alert) => ({
    title: `Delete the alert "${alert.name}"?`,
    message: 'No more emails will be sent for it. This cannot be undone.',
    confirmLabel: 'Delete alert',
    onConfirm: async () => {
      await api.delete(`${base}/${alert.id}`);
      alerts.reload();
      setVersion((value) => value + 1);
    },
  }));

  const toggle = (alert: Alert) =>
    toggling.run(async () => {
      const updated = await api.put<Alert>(`${base}/${alert.id}`, { isEnabled: !alert.isEnabled });
      alerts.setData((alerts.data ?? []).map((item) => (item.id === alert.id ? updated : item)));
    });

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
        <ErrorMessage error={alerts.error ? null : toggling.error} />
        <Loaded state={alerts} empty={<p>No alert yet.</p>}>
          {(list) => (
            <DataTable label="Alerts" columns={['Name', 'Goal', 'State', 'Last fired']} actions={editable}>
              {list.map((alert) => (
                <tr key={alert.id}>
                  <td>{alert.name}</td>
                  <td>
                    <GoalCell goalName={alert.trigger.goalName} goals={goals} />
                  </td>
                  <td>{alert.isEnabled ? <span class="status status-sent">enabled</span> : <span class="status">disabled</span>}</td>
                  <td>{alert.lastTriggeredAt ? formatDateTime(alert.lastTriggeredAt) : 'Never'}</td>
                  {editable && (
                    <td class="actions">
                      <ActionButton label={alert.isEnabled ? 'Disable' : 'Enable'} about={alert.name} onClick={() => toggle(alert)} />
                      <ActionButton label="Edit" about={alert.name} onClick={() => setEditing(alert)} />
                      <ActionButton label="Delete" about={alert.name} danger onClick={() => deletion.ask(alert)} />
                    </td>
                  )}
                </tr>
              ))}
            </DataTable>
          )}
        </Loaded>
      </Card>
      <History base={base} version={version} goals={goals} />
      {editing && (
        <AlertEditor
          item={editing === 'new' ? null : editing}
          base={base}
          goalNames={goalNames}
          goals={goals}
          onClose={() => setEditing(null)}
          onSaved={alerts.reload}
        />
      )}
      {deletion.dialog}
    </>
  );
}
