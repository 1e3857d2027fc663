import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { ActionButton, Card, ConfirmDialog, ErrorMessage, Loaded, Notice, SubmitButton, TextField, fieldErrors, formatDateTime, useAsync, useSubmit } from '../../components/index.ts';
import type { SectionProps } from './section-props.ts';

interface Status {
  connected: boolean;
  connectedAt: string | null;
  resync?: { status: 'queued' | 'running' | 'succeeded' | 'failed'; requestedAt: string; finishedAt: string | null; error: string | null } | null;
}

interface Provider {
  id: string;
  label: string;
  about: string;
  /** Credential fields of the connect route; none when this interface cannot connect it. */
  fields: Array<{ name: string; label: string }>;
  resync?: boolean;
}

const PROVIDERS: Provider[] = [
  { id: 'provider-one', label: 'Provider one', about: 'Card payments.', fields: [{ name: 'providerOneRestrictedKey', label: 'Restricted key' }] },
  {
    id: 'provider-two',
    label: 'Provider two',
    about: 'Store-based payments.',
    fields: [
      { name: 'providerTwoApiKey', label: 'API key' },
      { name: 'providerTwoStoreId', label: 'Store id' },
    ],
  },
  {
    id: 'provider-three',
    label: 'Provider three',
    about: 'Organisation-based payments.',
    fields: [
      { name: 'providerThreeAccessToken', label: 'Access token' },
      { name: 'providerThreeOrgId', label: 'Organisation id' },
    ],
  },
  { id: 'provider-four', label: 'Provider four', about: 'Payments with history re-sync.', fields: [{ name: 'providerFourApiKey', label: 'API key' }], resync: true },
  { id: 'provider-five', label: 'Provider five', about: 'Storefront platform; connected from the platform itself.', fields: [] },
  { id: 'provider-six', label: 'Provider six', about: 'Plugin-based shop platform; connected from its plugin.', fields: [] },
];

function ProviderCard({ provider, status, base, editable, onChanged }: { provider: Provider; status: Status | undefined; base: string; editable: boolean; onChanged: () => void }): JSX.Element {
  const [values, setValues] = useState<Record<string, string>>({});
  const [open, setOpen] = useState(false);
  const { busy, error, setError, notice, setNotice, run, onSubmit } = useSubmit();
  const [disconnecting, setDisconnecting] = useState(false);
  const fields = fieldErrors(error);
  const connected = Boolean(status?.connected);
  const path = `${base}/${provider.id}`;

  const connect = onSubmit(async () => {
    const body = Object.fromEntries(provider.fields.map((field) => [field.name, (values[field.name] ?? '').trim()]));
    await api.post(path, body);
    // Credentials never stay in the page once sent.
    setValues({});
    setOpen(false);
    onChanged();
    return `${provider.label} is connected.`;
  });

  const resync = () =>
    run(async () => {
      const answer = await api.patch<{ message?: string }>(path, {});
      onChanged();
      return answer?.message ?? 'A re-sync of the payment history is queued.';
    });

  return (
    <li class="card provider">
      <div class="row-between">
        <h3 class="item-title">{provider.label}</h3>
        <span class={connected ? 'status status-sent' : 'status'}>{connected ? 'connected' : 'not connected'}</span>
      </div>
      <p class="muted">{provider.about}</p>
      {connected && status?.connectedAt && <p class="small">Connected {formatDateTime(status.connectedAt)}.</p>}
      {status?.resync && (
        <p class="small">
          History re-sync: <span class={`status status-${status.resync.status}`}>{status.resync.status}</span> (asked{' '}
          {formatDateTime(status.resync.requestedAt)}){status.resync.error && <span class="block">{status.resync.error}</span>}
        </p>
      )}
      {editable && open && (
        <form onSubmit={connect} class="stack" autocomplete="off">
          {provider.fields.map((field) => (
            <TextField
              key={field.name}
              type="password"
              label={field.label}
              value={values[field.name] ?? ''}
              onValue={(value) => setValues((current) => ({ ...current, [field.name]: value }))}
              required
              maxLength={512}
              autocomplete="new-password"
              spellcheck={false}
              error={fields[field.name]}
            />
          ))}
          <p class="hint">Stored encrypted on the server; never shown again, here or anywhere.</p>
          <div class="row">
            <SubmitButton busy={busy} busyLabel="Connecting…" label={connected ? 'Replace credentials' : 'Connect'} class="button primary small" />
            <button type="button" class="button small" onClick={() => (setOpen(false), setValues({}), setError(null))}>
              Cancel
            </button>
          </div>
        </form>
      )}
      {editable && !open && (
        <div class="row">
          {provider.fields.length > 0 && (
            <ActionButton label={connected ? 'Replace credentials' : 'Connect'} about={provider.label} onClick={() => setOpen(true)} />
          )}
          {provider.resync && connected && <ActionButton label="Re-sync history" about={`of ${provider.label}`} onClick={resync} />}
          {connected && <ActionButton label="Disconnect" about={provider.label} danger onClick={() => setDisconnecting(true)} />}
        </div>
      )}
      <ErrorMessage error={Object.keys(fields).length ? null : error} />
      <Notice>{notice}</Notice>
      <ConfirmDialog
        open={disconnecting}
        title={`Disconnect ${provider.label}?`}
        message="Its credentials are deleted and no new payments arrive from it. Payments already recorded stay."
        confirmLabel="Disconnect"
        danger
        onConfirm={async () => {
          await api.delete(path);
          setNotice(`${provider.label} is disconnected.`);
          onChanged();
        }}
        onClose={() => setDisconnecting(false)}
      />
    </li>
  );
}

export function IntegrationsSection({ website, editable }: SectionProps): JSX.Element {
  const base = `/api/v1/admin/websites/${website.id}/integrations`;
  const state = useAsync(() => api.get<Record<string, Status>>(base), [base]);
  return (
    <Card title="Integrations">
      <p class="muted">Payment providers send revenue to this website's reports. Credentials are write-only.</p>
      <Loaded state={state}>
        {(statuses) => (
          <ul class="provider-grid">
            {PROVIDERS.map((provider) => (
              <ProviderCard key={provider.id} provider={provider} status={statuses[provider.id]} base={base} editable={editable} onChanged={state.reload} />
            ))}
          </ul>
        )}
      </Loaded>
    </Card>
  );
}
