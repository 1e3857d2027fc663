// The pages of the mailed links: password reset and invitation (their one-time token is in the
// URL fragment).
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, type SessionInfo, api } from '../api.ts';
import { ErrorMessage, Loading, SubmitButton, TextField, fieldErrors, useSubmit } from '../components/index.ts';
import { Link, navigate } from '../router.tsx';
import { setFlash, useSession } from '../session.tsx';
import { AuthCard, PasswordField } from './auth-card.tsx';

/** The one-time token of a mailed link, from the URL fragment (never sent to the server by the browser). */
function useHashToken(): string {
  const [token, setToken] = useState(() => decodeURIComponent(location.hash.slice(1)));
  useEffect(() => {
    const read = () => setToken(decodeURIComponent(location.hash.slice(1)));
    window.addEventListener('hashchange', read);
    return () => window.removeEventListener('hashchange', read);
  }, []);
  return token;
}

export function ResetPasswordPage(): JSX.Element {
  const token = useHashToken();
  const { session, signedOut } = useSession();
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const { busy, error, onSubmit } = useSubmit();
  const fields = fieldErrors(error);
  const submit = onSubmit(
    async () => {
      await api.post('/api/v1/dashboard/password-reset/confirm', { token, password });
      setFlash('Your password was changed. Sign in with the new one.');
      // Every session of the account was revoked, this browser's included when it was the same account.
      if (session) signedOut();
      navigate('/sign-in', { replace: true });
    },
    { check: () => password !== confirm && 'The two passwords differ.' },
  );
  if (!token) {
    return (
      <AuthCard title="Choose a new password">
        <ErrorMessage error="This link is incomplete. Open the link from the email again, or ask for a new one." />
        <p class="auth-links">
          <Link href="/forgot-password">Ask for a new link</Link>
        </p>
      </AuthCard>
    );
  }
  return (
    <AuthCard title="Choose a new password">
      <form onSubmit={submit} class="stack">
        <PasswordField label="New password" value={password} onValue={setPassword} isNew error={fields.password} />
        <PasswordField label="New password, again" value={confirm} onValue={setConfirm} isNew hint={null} />
        <ErrorMessage error={error} />
        <SubmitButton busy={busy} busyLabel="Saving…" label="Save the new password" class="button primary wide" />
      </form>
      <p class="auth-links">
        <Link href="/forgot-password">Ask for a new link</Link>
      </p>
    </AuthCard>
  );
}

interface Invitation {
  email: string;
  websiteDomain: string;
  role: string;
  accountExists: boolean;
}

export function InvitePage(): JSX.Element {
  const token = useHashToken();
  const { signedIn } = useSession();
  const [invitation, setInvitation] = useState<Invitation | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const { busy, error, onSubmit } = useSubmit();
  const fields = fieldErrors(error);

  useEffect(() => {
    setInvitation(null);
    setLoadError(null);
    if (!token) return;
    api.get<Invitation>(`/api/v1/dashboard/invitations/${encodeURIComponent(token)}`).then(setInvitation, setLoadError);
  }, [token]);

  // The form shows once the invitation is read.
  const submit = onSubmit(async () => {
    if (!invitation) return;
    const body = invitation.accountExists ? { token, password } : { token, name: name.trim(), password };
    const session = await api.post<SessionInfo>('/api/v1/dashboard/invitations/accept', body);
    signedIn(session);
    navigate('/websites', { replace: true });
  });

  if (!token) {
    return (
      <AuthCard title="Invitation">
        <ErrorMessage error="This link is incomplete. Open the link from the invitation email again." />
      </AuthCard>
    );
  }
  if (loadError) {
    const gone = loadError instanceof ApiError && (loadError.status === 404 || loadError.status === 410);
    return (
      <AuthCard title="Invitation">
        <ErrorMessage error={gone ? 'This invitation is unknown, was already used or has expired. Ask for a new one.' : loadError} />
      </AuthCard>
    );
  }
  if (!invitation) {
    return (
      <AuthCard title="Invitation">
        <Loading label="Reading the invitation…" />
      </AuthCard>
    );
  }
  return (
    <AuthCard
      title={`Join ${invitation.websiteDomain}`}
      intro={
        <>
          You are invited to <strong>{invitation.websiteDomain}</strong> as a <strong>{invitation.role}</strong>, with the address{' '}
          <strong>{invitation.email}</strong>.
        </>
      }
    >
      <form onSubmit={submit} class="stack">
        {invitation.accountExists ? (
          <p>You already have an account: enter its password to accept.</p>
        ) : (
          <TextField label="Your name" value={name} onValue={setName} autocomplete="name" required maxLength={100} error={fields.name} />
        )}
        <PasswordField
          label={invitation.accountExists ? 'Password' : 'Choose a password'}
          value={password}
          onValue={setPassword}
          isNew={!invitation.accountExists}
          error={fields.password}
        />
        <ErrorMessage error={error instanceof ApiError && error.status === 401 ? 'The password is wrong.' : error} />
        <SubmitButton busy={busy} busyLabel="Joining…" label="Accept the invitation" class="button primary wide" />
      </form>
    </AuthCard>
  );
}
