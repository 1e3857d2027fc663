import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { Card, ConfirmDialog, CopyBox, ErrorMessage, Loading, TextField, fieldErrors, formatDateTime, TableWrap, useAsync } from '../../components/index.ts';
import type { SectionProps } from './SettingsPage.tsx';

interface ApiKey {
  id: string;
  name: string;
  displayKey: string;
  lastUsedAt: string | null;
  createdAt: string;
  key?: string;
}

/** A raw secret, shown once: copy it now, it is never shown again. */
export function SecretOnce({ title, secret, onDone }: { title: string; secret: string; onDone: () => void }): JSX.Element {
  return (
    <div class="secret-once" role="status">
      <p>
        <strong>{title}</strong> Copy it now: it will not be shown again.
      </p>
      <CopyBox text={secret} label={title} />
      <button type="button" class="button small" onClick={onDone}>
        I have copied it
      </button>
    </div>
  );
}

export function ApiKeysSection({ website, editable }: SectionProps): JSX.Element {
  const base = `/api/v1/admin/websites/${website.id}/apikeys`;
  const keys = useAsync(() => api.list<ApiKey>(base), [base]);
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [secret, setSecret] = useState<{ title: string; value: string } | null>(null);
  const [confirm, setConfirm] = useState<{ key: ApiKey; action: 'roll' | 'revoke' } | null>(null);
  const fields = fieldErrors(error);

  async function create(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const created = await api.post<ApiKey>(base, { name: name.trim() });
      setSecret({ title: `The new key "${created.name}":`, value: created.key ?? '' });
      setName('');
      keys.reload();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  }

  async function act() {
    if (!confirm) return;
    const { key, action } = confirm;
    if (action === 'roll') {
      const rolled = await api.put<ApiKey>(`${base}/${key.id}`, {});
      setSecret({ title: `The new secret of "${key.name}":`, value: rolled.key ?? '' });
    } else {
      await api.delete(`${base}/${key.id}`);
    }
    keys.reload();
  }

  return (
    <Card title="Website API keys">
      <p class="muted">
        A key (<code>df_…</code>) lets a backend send goals and payments for this website and read its analytics. It acts for this
        website only.
      </p>
      {secret && <SecretOnce title={secret.title} secret={secret.value} onDone={() => setSecret(null)} />}
      <ErrorMessage error={keys.error} onRetry={keys.reload} />
      {!keys.data && !keys.error && <Loading />}
      {keys.data && keys.data.length === 0 && <p>No key yet.</p>}
      {keys.data && keys.data.length > 0 && (
        <TableWrap label="API keys">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">Last used</th>
                <th scope="col">Created</th>
                {editable && <th scope="col"><span class="visually-hidden">Actions</span></th>}
              </tr>
            </thead>
            <tbody>
              {keys.data.map((key) => (
                <tr key={key.id}>
                  <td>{key.name}</td>
                  <td>
                    <code>{key.displayKey}</code>
                  </td>
                  <td>{key.lastUsedAt ? formatDateTime(key.lastUsedAt) : 'Never'}</td>
                  <td>{formatDateTime(key.createdAt)}</td>
                  {editable && (
                    <td class="actions">
                      <button type="button" class="button small" onClick={() => setConfirm({ key, action: 'roll' })}>
                        Roll<span class="visually-hidden"> {key.name}</span>
                      </button>
                      <button type="button" class="button small danger-text" onClick={() => setConfirm({ key, action: 'revoke' })}>
                        Revoke<span class="visually-hidden"> {key.name}</span>
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      {editable && (
        <form onSubmit={create} class="inline-form">
          <TextField label="New key's name" value={name} onValue={setName} required maxLength={100} placeholder="Backend" error={fields.name} />
          <button type="submit" class="button primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create key'}
          </button>
        </form>
      )}
      {editable && <ErrorMessage error={fields.name ? null : error} />}
      <ConfirmDialog
        open={confirm !== null}
        title={confirm?.action === 'roll' ? `Roll the key "${confirm.key.name}"?` : `Revoke the key "${confirm?.key.name ?? ''}"?`}
        message={
          confirm?.action === 'roll'
            ? 'A new secret replaces the current one, which stops working at once. Update every program that uses it.'
            : 'Programs using this key will be refused from now on. This cannot be undone.'
        }
        confirmLabel={confirm?.action === 'roll' ? 'Roll key' : 'Revoke key'}
        danger
        onConfirm={act}
        onClose={() => setConfirm(null)}
      />
    </Card>
  );
}
