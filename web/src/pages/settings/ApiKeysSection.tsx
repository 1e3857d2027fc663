import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { ActionButton, Card, CopyBox, DataTable, ErrorMessage, Loaded, SubmitButton, TextField, fieldErrors, formatDateTime, useAsync, useConfirm, useSubmit } from '../../components/index.ts';
import type { SectionProps } from './section-props.ts';

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
  const { busy, error, onSubmit } = useSubmit();
  const [secret, setSecret] = useState<{ title: string; value: string } | null>(null);
  const fields = fieldErrors(error);
  const confirm = useConfirm(({ key, action }: { key: ApiKey; action: 'roll' | 'revoke' }) => ({
    title: action === 'roll' ? `Roll the key "${key.name}"?` : `Revoke the key "${key.name}"?`,
    message:
      action === 'roll'
        ? 'A new secret replaces the current one, which stops working at once. Update every program that uses it.'
        : 'Programs using this key will be refused from now on. This cannot be undone.',
    confirmLabel: action === 'roll' ? 'Roll key' : 'Revoke key',
    onConfirm: async () => {
      if (action === 'roll') {
        const rolled = await api.put<ApiKey>(`${base}/${key.id}`, {});
        setSecret({ title: `The new secret of "${key.name}":`, value: rolled.key ?? '' });
      } else {
        await api.delete(`${base}/${key.id}`);
      }
      keys.reload();
    },
  }));

  const create = onSubmit(async () => {
    const created = await api.post<ApiKey>(base, { name: name.trim() });
    setSecret({ title: `The new key "${created.name}":`, value: created.key ?? '' });
    setName('');
    keys.reload();
  });

  return (
    <Card title="Website API keys">
      <p class="muted">
        A key (<code>df_…</code>) lets a backend send goals and payments for this website and read its analytics. It acts for this
        website only.
      </p>
      {secret && <SecretOnce title={secret.title} secret={secret.value} onDone={() => setSecret(null)} />}
      <Loaded state={keys} empty={<p>No key yet.</p>}>
        {(list) => (
          <DataTable label="API keys" columns={['Name', 'Key', 'Last used', 'Created']} actions={editable}>
            {list.map((key) => (
              <tr key={key.id}>
                <td>{key.name}</td>
                <td>
                  <code>{key.displayKey}</code>
                </td>
                <td>{key.lastUsedAt ? formatDateTime(key.lastUsedAt) : 'Never'}</td>
                <td>{formatDateTime(key.createdAt)}</td>
                {editable && (
                  <td class="actions">
                    <ActionButton label="Roll" about={key.name} onClick={() => confirm.ask({ key, action: 'roll' })} />
                    <ActionButton label="Revoke" about={key.name} danger onClick={() => confirm.ask({ key, action: 'revoke' })} />
                  </td>
                )}
              </tr>
            ))}
          </DataTable>
        )}
      </Loaded>
      {editable && (
        <form onSubmit={create} class="inline-form">
          <TextField label="New key's name" value={name} onValue={setName} required maxLength={100} placeholder="Backend" error={fields.name} />
          <SubmitButton busy={busy} busyLabel="Creating…" label="Create key" />
        </form>
      )}
      {editable && <ErrorMessage error={fields.name ? null : error} />}
      {confirm.dialog}
    </Card>
  );
}
