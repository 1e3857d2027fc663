// Shared dashboards: the switch that lets this website's public links open, and the links
// themselves (create, copy once, protect with a password, revoke). A link shows the analytics
// page read-only to whoever holds its URL; its URL is shown once, when it is created.
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import {
  ActionButton,
  Card,
  CheckboxField,
  CopyBox,
  DataTable,
  ErrorMessage,
  FormDialog,
  Loaded,
  SubmitButton,
  TextField,
  fieldErrors,
  formatDateTime,
  useAsync,
  useConfirm,
  useSubmit,
} from '../../components/index.ts';
import type { Website } from '../../types.ts';
import { PasswordField } from '../auth-card.tsx';
import type { SectionProps } from './section-props.ts';

interface SharedLink {
  id: string;
  name: string;
  displaySlug: string;
  hasPassword: boolean;
  createdAt: string;
  url?: string;
}

function embedCode(url: string): string {
  return `<iframe src="${url}?embed=true" title="Analytics" style="width: 100%; height: 1600px; border: 0" loading="lazy"></iframe>`;
}

function PublicSwitch({ website, editable, onChange }: SectionProps): JSX.Element {
  const { busy, error, run } = useSubmit();
  const toggle = (on: boolean) =>
    void run(async () => onChange(await api.put<Website>(`/api/v1/admin/websites/${website.id}`, { isPublicDashboardEnabled: on })));
  return (
    <>
      <CheckboxField
        label="Let shared links open"
        checked={website.isPublicDashboardEnabled}
        onChecked={toggle}
        disabled={!editable || busy}
        hint="Off: every link below answers “not available” at once, even for someone who already opened it. On again: the links that were not revoked work again."
      />
      <ErrorMessage error={error} />
    </>
  );
}

function CreatedLink({ link, onDone }: { link: SharedLink; onDone: () => void }): JSX.Element {
  return (
    <div class="secret-once" role="status">
      <p>
        <strong>The link “{link.name}”:</strong> copy it now: it will not be shown again.
      </p>
      <CopyBox text={link.url ?? ''} label="Shared dashboard URL" />
      <p class="muted">To embed it in a page of yours:</p>
      <CopyBox text={embedCode(link.url ?? '')} label="Embed code" />
      <button type="button" class="button small" onClick={onDone}>
        I have copied it
      </button>
    </div>
  );
}

export function SharingSection(props: SectionProps): JSX.Element {
  const { website, editable } = props;
  const base = `/api/v1/admin/websites/${website.id}/shared-links`;
  const links = useAsync(() => api.list<SharedLink>(base), [base]);
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [created, setCreated] = useState<SharedLink | null>(null);
  const create = useSubmit();
  const fields = fieldErrors(create.error);
  const [protecting, setProtecting] = useState<SharedLink | null>(null);
  const [newPassword, setNewPassword] = useState('');
  const protect = useSubmit();

  const confirm = useConfirm(({ link, action }: { link: SharedLink; action: 'revoke' | 'unprotect' }) => ({
    title: action === 'revoke' ? `Revoke the link “${link.name}”?` : `Remove the password of “${link.name}”?`,
    message:
      action === 'revoke'
        ? 'Whoever has its URL is refused from now on, also in a page already open. This cannot be undone.'
        : 'Anyone with its URL will see the dashboard without a password.',
    confirmLabel: action === 'revoke' ? 'Revoke link' : 'Remove password',
    onConfirm: async () => {
      if (action === 'revoke') await api.delete(`${base}/${link.id}`);
      else await api.put(`${base}/${link.id}`, { password: null });
      links.reload();
    },
  }));

  const submitCreate = create.onSubmit(async () => {
    const body = password ? { name: name.trim(), password } : { name: name.trim() };
    setCreated(await api.post<SharedLink>(base, body));
    setName('');
    setPassword('');
    links.reload();
  });

  const submitProtect = protect.onSubmit(async () => {
    await api.put(`${base}/${protecting!.id}`, { password: newPassword });
    setProtecting(null);
    setNewPassword('');
    links.reload();
  });

  return (
    <Card title="Sharing">
      <p class="muted">
        A shared link shows this website’s analytics page, read-only and without its settings, to anyone who has the link (and its
        password, if you set one). Add <code>?embed=true</code> to put it in an iframe on another site.
      </p>
      <PublicSwitch {...props} />
      {created && <CreatedLink link={created} onDone={() => setCreated(null)} />}
      <Loaded state={links} empty={<p>No shared link yet.</p>}>
        {(list) => (
          <DataTable label="Shared links" columns={['Name', 'Link', 'Password', 'Created']} actions={editable}>
            {list.map((link) => (
              <tr key={link.id}>
                <td>{link.name}</td>
                <td>
                  <code>/share/{link.displaySlug}</code>
                </td>
                <td>{link.hasPassword ? 'Yes' : 'No'}</td>
                <td>{formatDateTime(link.createdAt)}</td>
                {editable && (
                  <td class="actions">
                    <ActionButton label={link.hasPassword ? 'Change password' : 'Set password'} about={link.name} onClick={() => setProtecting(link)} />
                    {link.hasPassword && <ActionButton label="Remove password" about={link.name} onClick={() => confirm.ask({ link, action: 'unprotect' })} />}
                    <ActionButton label="Revoke" about={link.name} danger onClick={() => confirm.ask({ link, action: 'revoke' })} />
                  </td>
                )}
              </tr>
            ))}
          </DataTable>
        )}
      </Loaded>
      {editable && (
        <form onSubmit={submitCreate} class="stack">
          <TextField label="New link's name" value={name} onValue={setName} required maxLength={100} placeholder="Investors" error={fields.name} />
          <TextField
            label="Password (optional)"
            type="password"
            value={password}
            onValue={setPassword}
            autocomplete="new-password"
            minLength={10}
            maxLength={200}
            hint="Leave empty for a link anyone with the URL can open; otherwise at least 10 characters."
            error={fields.password}
          />
          <SubmitButton busy={create.busy} busyLabel="Creating…" label="Create link" />
        </form>
      )}
      {editable && <ErrorMessage error={fields.name || fields.password ? null : create.error} />}
      <FormDialog
        open={protecting !== null}
        title={`Password of “${protecting?.name ?? ''}”`}
        onClose={() => setProtecting(null)}
        onSubmit={submitProtect}
        class="stack"
        busy={protect.busy}
        error={protect.error}
        submitLabel="Save password"
      >
        <p>Whoever opened the link before will be asked for the new password.</p>
        <PasswordField label="New password" value={newPassword} onValue={setNewPassword} isNew />
      </FormDialog>
      {confirm.dialog}
    </Card>
  );
}
