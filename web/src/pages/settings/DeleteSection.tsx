import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError, type SessionInfo, api } from '../../api.ts';
import { Card, Dialog, ErrorMessage, TextField } from '../../components/index.ts';
import { navigate } from '../../router.tsx';
import { useSession } from '../../session.tsx';
import type { SectionProps } from './SettingsPage.tsx';

function needsReauthentication(error: unknown): boolean {
  return error instanceof ApiError && error.status === 403 && /re-?auth|again|password|recent/i.test(error.message);
}

export function DeleteSection({ website }: SectionProps): JSX.Element {
  const { signedIn } = useSession();
  const [open, setOpen] = useState(false);
  const [typed, setTyped] = useState('');
  const [password, setPassword] = useState('');
  const [askPassword, setAskPassword] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  function close() {
    setOpen(false);
    setTyped('');
    setPassword('');
    setAskPassword(false);
    setError(null);
  }

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      if (askPassword) {
        const session = await api.post<SessionInfo>('/api/v1/dashboard/reauthenticate', { password });
        signedIn(session);
      }
      await api.delete(`/api/v1/dashboard/websites/${website.id}`, { confirmDomain: typed.trim() });
      navigate('/websites', { replace: true });
    } catch (caught) {
      if (needsReauthentication(caught) && !askPassword) {
        setAskPassword(true);
        setError(null);
      } else if (caught instanceof ApiError && caught.status === 401 && askPassword) {
        setError('The password is wrong.');
      } else {
        setError(caught);
      }
    } finally {
      setBusy(false);
    }
  }

  const matches = typed.trim().toLowerCase() === website.domain.toLowerCase();
  return (
    <Card title="Delete this website" class="danger-zone">
      <p>
        Deleting <strong>{website.domain}</strong> removes its settings, keys, goals, funnels, alerts, team and every event recorded
        for it. This cannot be undone.
      </p>
      <button type="button" class="button danger" onClick={() => setOpen(true)}>
        Delete website…
      </button>
      <Dialog open={open} title={`Delete ${website.domain}?`} onClose={close}>
        <form onSubmit={submit} class="stack">
          <p>Everything recorded for this website is deleted for good.</p>
          <TextField
            label={`Type ${website.domain} to confirm`}
            value={typed}
            onValue={setTyped}
            required
            autocomplete="off"
            spellcheck={false}
          />
          {askPassword && (
            <>
              <p role="status">For your safety, confirm it is you: enter your password.</p>
              <TextField label="Your password" type="password" value={password} onValue={setPassword} required autocomplete="current-password" />
            </>
          )}
          <ErrorMessage error={error} />
          <div class="dialog-actions">
            <button type="button" class="button" onClick={close}>
              Cancel
            </button>
            <button type="submit" class="button danger" disabled={busy || !matches}>
              {busy ? 'Deleting…' : 'Delete for good'}
            </button>
          </div>
        </form>
      </Dialog>
    </Card>
  );
}
