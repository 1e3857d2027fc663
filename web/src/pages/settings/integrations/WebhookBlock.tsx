// A provider's webhook: the URL to paste into the provider, which events to send there, the
// signing secret (write-only), and what has arrived. For Shopify and WooCommerce, saving the
// secret is what connects them.
import type { JSX } from 'preact';
import { useId, useState } from 'preact/hooks';
import { api } from '../../../api.ts';
import { CopyButton, ErrorMessage, Notice, SubmitButton, TextField, fieldErrors, formatDateTime, useSubmit } from '../../../components/index.ts';
import { type ProviderInfo, type WebhookState, hasApi } from './providers.ts';

export interface WebhookBlockProps {
  provider: ProviderInfo;
  webhook: WebhookState;
  connected: boolean;
  /** `${base}/${provider.id}`: the provider's routes. */
  path: string;
  editable: boolean;
  onChanged: () => void;
}

export function WebhookBlock({ provider, webhook, connected, path, editable, onChanged }: WebhookBlockProps): JSX.Element {
  const urlId = useId();
  const [secret, setSecret] = useState('');
  const { busy, error, notice, onSubmit } = useSubmit();
  const fields = fieldErrors(error);
  const connects = !hasApi(provider);

  const save = onSubmit(async () => {
    const signingSecret = secret.trim();
    // The secret never stays in the page once sent, whatever the answer.
    setSecret('');
    await api.put(`${path}/webhook`, { signingSecret });
    onChanged();
    if (connects && !connected) return `${provider.name} is connected.`;
    return `The signing secret of ${provider.name} is saved.`;
  });

  const saveLabel = connects ? (connected ? 'Replace secret' : 'Connect') : webhook.secretSet ? 'Replace secret' : 'Save';

  return (
    <div class="webhook">
      <h4 class="webhook-title">
        Webhook<span class="visually-hidden"> of {provider.name}</span>
      </h4>
      <div class="field">
        <label for={urlId}>Webhook URL</label>
        <div class="copy-field">
          <input id={urlId} type="text" value={webhook.url} readOnly spellcheck={false} onFocus={(event) => event.currentTarget.select()} />
          {editable && <CopyButton text={webhook.url} about={`the webhook URL of ${provider.name}`} fieldId={urlId} />}
        </div>
      </div>
      <p class="hint">
        {provider.webhook.where}{' '}
        {provider.webhook.events.map((event, index) => (
          <span key={event}>
            {index > 0 && (index === provider.webhook.events.length - 1 ? ' and ' : ', ')}
            <code>{event}</code>
          </span>
        ))}
        . {provider.webhook.secret}
      </p>
      <p class="small">
        {webhook.secretSet ? `Secret set ${formatDateTime(webhook.secretSetAt)}.` : 'No secret yet.'}{' '}
        <span class="block">
          {webhook.lastEventAt
            ? `Last event: ${webhook.lastEventType ?? 'unknown'} at ${formatDateTime(webhook.lastEventAt)} (${webhook.eventsReceived} received).`
            : 'No event received yet.'}
        </span>
      </p>
      {editable && (
        <form onSubmit={save} class="stack" autocomplete="off">
          <TextField
            type="password"
            label="Signing secret"
            value={secret}
            onValue={setSecret}
            required
            maxLength={512}
            autocomplete="new-password"
            spellcheck={false}
            hint="Stored encrypted on the server; never shown again."
            error={fields.signingSecret}
          />
          <div class="row">
            <SubmitButton
              busy={busy}
              busyLabel="Saving…"
              label={
                <>
                  {saveLabel}
                  <span class="visually-hidden"> (signing secret of {provider.name})</span>
                </>
              }
              class="button primary small"
            />
          </div>
        </form>
      )}
      <ErrorMessage error={fields.signingSecret ? null : error} />
      <Notice>{notice}</Notice>
    </div>
  );
}
