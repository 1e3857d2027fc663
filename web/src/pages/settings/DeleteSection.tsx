import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError, type SessionInfo, api } from '../../api.ts';
import { Card, FormDialog, TextField, fieldErrors, useSubmit } from '../../components/index.ts';
import { navigate } from '../../router.tsx';
import { useSession } from '../../session.tsx';
import type { SectionProps } from './section-props.ts';

function needsReauthentication(error: unknown): boolean {
  return error instanceof ApiError && error.status === 403 && /re-?auth|again|password|recent/i.test(error.message);
}

export function DeleteSection({ website }: SectionProps): JSX.Element {
  const { signedIn } = useSession();
  const [open, setOpen] = useState(false);
  const [typed, setTyped] = useState('');
  const [password, setPassword] = useState('');
  const [askPassword, setAskPassword] = useState(false);
  const { busy, error, setError, onSubmit } = useSubmit();
  const fields = fieldErrors(error);

  function close() {
    setOpen(false);
    setTyped('');
    setPassword('');
    setAskPassword(false);
    setError(null);
  }

  const submit = onSubmit(
    async () => {
      if (askPassword) {
        const session = await api.post<SessionInfo>('/api/v1/dashboard/reauthenticate', { password });
        signedIn(session);
      }
      await api.delete(`/api/v1/dashboard/websites/${website.id}`, { confirmDomain: typed.trim() });
      navigate('/websites', { replace: true });
    },
    {
      // A password is asked for (no error) when the server wants a recent sign-in.
      describe: (caught) => {
        if (needsReauthentication(caught) && !askPassword) {
          setAskPassword(true);
          return null;
        }
        return caught instanceof ApiError && caught.status === 401 && askPassword ? 'The password is wrong.' : caught;
      },
    },
  );

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
      <FormDialog
        open={open}
        title={`Delete ${website.domain}?`}
        onClose={close}
        onSubmit={submit}
        class="stack"
        busy={busy}
        error={fields.confirmDomain || fields.password ? null : error}
        submitLabel="Delete for good"
        busyLabel="Deleting…"
        danger
        disabled={!matches}
      >
        <p>Everything recorded for this website is deleted for good.</p>
        <TextField
          label={`Type ${website.domain} to confirm`}
          value={typed}
          onValue={setTyped}
          required
          autocomplete="off"
          spellcheck={false}
          error={fields.confirmDomain}
        />
        {askPassword && (
          <>
            <p role="status">For your safety, confirm it is you: enter your password.</p>
            <TextField label="Your password" type="password" value={password} onValue={setPassword} required autocomplete="current-password" error={fields.password} />
          </>
        )}
      </FormDialog>
    </Card>
  );
}
