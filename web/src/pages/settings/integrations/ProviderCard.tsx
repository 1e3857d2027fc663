// One payment provider: its connection (the API credential of providers one to four), what the
// background job made of it, and its webhook. Viewers see the status, never a form or a button.
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../../../api.ts';
import { ActionButton, ConfirmDialog, ErrorMessage, Notice, SubmitButton, TextField, fieldErrors, formatDateTime, useSubmit } from '../../../components/index.ts';
import { AccountLine, HistoryLine } from './ApiStatus.tsx';
import { type ProviderInfo, type ProviderStatus, hasApi, titleOf } from './providers.ts';
import { WebhookBlock } from './WebhookBlock.tsx';

export interface ProviderCardProps {
  provider: ProviderInfo;
  status: ProviderStatus | undefined;
  /** The integrations' path: `${base}/${provider.id}` is the provider's. */
  base: string;
  editable: boolean;
  onChanged: () => void;
}

export function ProviderCard({ provider, status, base, editable, onChanged }: ProviderCardProps): JSX.Element {
  const [values, setValues] = useState<Record<string, string>>({});
  const [open, setOpen] = useState(false);
  const { busy, error, setError, notice, setNotice, run, onSubmit } = useSubmit();
  const [disconnecting, setDisconnecting] = useState(false);
  const fields = fieldErrors(error);
  const connected = Boolean(status?.connected);
  const viaApi = hasApi(provider);
  const path = `${base}/${provider.id}`;
  const title = titleOf(provider);

  const connect = onSubmit(async () => {
    const body = Object.fromEntries(provider.fields.map((field) => [field.name, (values[field.name] ?? '').trim()]));
    await api.post(path, body);
    // Credentials never stay in the page once sent.
    setValues({});
    setOpen(false);
    onChanged();
    return `${provider.name} is connected: the key is being checked.`;
  });

  const resync = () =>
    run(async () => {
      const answer = await api.post<{ message?: string }>(`${path}/resync`, {});
      onChanged();
      return answer?.message ?? 'A re-sync of the payment history is queued.';
    });

  // The webhook of an API provider is set once it is connected (the server refuses it before);
  // Shopify's and WooCommerce's is how they connect.
  const showWebhook = status?.webhook !== undefined && (connected || !viaApi);

  return (
    <li class="card provider">
      <div class="row-between">
        <h3 class="item-title">
          {provider.name} <span class="muted provider-id">({provider.id})</span>
        </h3>
        <span class={connected ? 'status status-sent' : 'status'}>{connected ? 'connected' : 'not connected'}</span>
      </div>
      <p class="muted">{provider.about}</p>
      {connected && status?.connectedAt && <p class="small">Connected {formatDateTime(status.connectedAt)}.</p>}
      {connected && status?.account && <AccountLine account={status.account} providerName={provider.name} />}
      {connected && status?.history && <HistoryLine history={status.history} />}
      {editable && open && (
        <form onSubmit={connect} class="stack" autocomplete="off">
          {provider.fields.map((field) => (
            <TextField
              key={field.name}
              type={field.secret ? 'password' : 'text'}
              label={field.label}
              hint={field.hint}
              value={values[field.name] ?? ''}
              onValue={(value) => setValues((current) => ({ ...current, [field.name]: value }))}
              required
              maxLength={512}
              autocomplete={field.secret ? 'new-password' : 'off'}
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
      {editable && !open && (viaApi || connected) && (
        <div class="row">
          {viaApi && <ActionButton label={connected ? 'Replace credentials' : 'Connect'} about={title} onClick={() => setOpen(true)} />}
          {viaApi && connected && <ActionButton label="Re-sync history" about={`of ${title}`} onClick={resync} />}
          {connected && <ActionButton label="Disconnect" about={title} danger onClick={() => setDisconnecting(true)} />}
        </div>
      )}
      <ErrorMessage error={Object.keys(fields).length ? null : error} />
      <Notice>{notice}</Notice>
      {showWebhook && status?.webhook && (
        <WebhookBlock provider={provider} webhook={status.webhook} connected={connected} path={path} editable={editable} onChanged={onChanged} />
      )}
      {viaApi && !connected && <p class="hint">Once connected, its webhook is set up here too.</p>}
      <ConfirmDialog
        open={disconnecting}
        title={`Disconnect ${provider.name}?`}
        message={`Its ${viaApi ? 'credentials and ' : ''}webhook signing secret are deleted and no new payments arrive from it. Payments already recorded stay.`}
        confirmLabel="Disconnect"
        danger
        onConfirm={async () => {
          await api.delete(path);
          setNotice(`${provider.name} is disconnected.`);
          onChanged();
        }}
        onClose={() => setDisconnecting(false)}
      />
    </li>
  );
}
