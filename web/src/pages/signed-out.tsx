// The pages of someone not signed in: first-run setup, sign-in, sign-up, forgotten password,
// password reset and invitation (the last two from mailed links, whose token is in the fragment).
import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, type SessionInfo, api } from '../api.ts';
import { Card, ErrorMessage, Loading, TextField, errorText, fieldErrors } from '../components/index.ts';
import { Link, navigate, useLocation } from '../router.tsx';
import { nextPath, setFlash, takeFlash, useSession, useTitle } from '../session.tsx';

const PASSWORD_HINT = 'At least 10 characters.';

function AuthCard({ title, intro, children }: { title: string; intro?: ComponentChildren; children: ComponentChildren }): JSX.Element {
  useTitle(title);
  return (
    <div class="auth">
      <h1>{title}</h1>
      {intro && <p class="auth-intro">{intro}</p>}
      <Card>{children}</Card>
    </div>
  );
}

/** A form's submit state: busy while the request runs, the error it ended with. */
function useSubmit() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  async function run(action: () => Promise<void>) {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  }
  return { busy, error, setError, run };
}

function PasswordField(props: { label?: string; value: string; onValue: (value: string) => void; error?: string; isNew?: boolean; hint?: string | null }) {
  return (
    <TextField
      type="password"
      label={props.label ?? 'Password'}
      value={props.value}
      onValue={props.onValue}
      autocomplete={props.isNew ? 'new-password' : 'current-password'}
      required
      minLength={props.isNew ? 10 : undefined}
      maxLength={200}
      hint={props.hint === null ? undefined : (props.hint ?? (props.isNew ? PASSWORD_HINT : undefined))}
      error={props.error}
    />
  );
}

/** The fields of a new account: setup and sign-up. */
function NewAccountForm({ endpoint, submitLabel }: { endpoint: string; submitLabel: string }): JSX.Element {
  const { signedIn } = useSession();
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const { busy, error, run } = useSubmit();
  const fields = fieldErrors(error);
  function submit(event: Event) {
    event.preventDefault();
    void run(async () => {
      const session = await api.post<SessionInfo>(endpoint, { email: email.trim(), name: name.trim(), password });
      signedIn(session);
      navigate('/websites', { replace: true });
    });
  }
  return (
    <form onSubmit={submit} class="stack">
      <TextField label="Email" type="email" value={email} onValue={setEmail} autocomplete="email" required error={fields.email} />
      <TextField label="Name" value={name} onValue={setName} autocomplete="name" required maxLength={100} error={fields.name} />
      <PasswordField value={password} onValue={setPassword} isNew error={fields.password} />
      <ErrorMessage error={error} />
      <button type="submit" class="button primary wide" disabled={busy}>
        {busy ? 'Creating…' : submitLabel}
      </button>
    </form>
  );
}

export function SetupPage(): JSX.Element {
  return (
    <AuthCard title="Welcome to Sightline" intro="Create the first account. It will own the websites it adds and can invite others.">
      <NewAccountForm endpoint="/api/v1/dashboard/setup" submitLabel="Create account" />
    </AuthCard>
  );
}

export function SignUpPage(): JSX.Element {
  return (
    <AuthCard title="Create an account">
      <NewAccountForm endpoint="/api/v1/dashboard/sign-up" submitLabel="Create account" />
      <p class="auth-links">
        Already have an account? <Link href="/sign-in">Sign in</Link>
      </p>
    </AuthCard>
  );
}

function signInMessage(error: unknown): string | null {
  if (!error) return null;
  if (error instanceof ApiError && error.status === 401) return 'The email or the password is wrong.';
  if (error instanceof ApiError && error.status === 429) return `Too many attempts. ${error.message}`;
  return errorText(error);
}

export function SignInPage(): JSX.Element {
  const { signedIn, setup } = useSession();
  const { query } = useLocation();
  const [flash] = useState(takeFlash);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const { busy, error, run } = useSubmit();
  function submit(event: Event) {
    event.preventDefault();
    void run(async () => {
      const session = await api.post<SessionInfo>('/api/v1/dashboard/sign-in', { email: email.trim(), password });
      signedIn(session);
      navigate(nextPath(query), { replace: true });
    });
  }
  return (
    <AuthCard title="Sign in">
      {flash && (
        <p class="notice" role="status">
          {flash}
        </p>
      )}
      <form onSubmit={submit} class="stack">
        <TextField label="Email" type="email" value={email} onValue={setEmail} autocomplete="username" required />
        <PasswordField value={password} onValue={setPassword} />
        <ErrorMessage error={signInMessage(error)} />
        <button type="submit" class="button primary wide" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <p class="auth-links">
        <Link href="/forgot-password">Forgot your password?</Link>
        {setup.signUpOpen && (
          <>
            {' · '}
            <Link href="/sign-up">Create an account</Link>
          </>
        )}
      </p>
    </AuthCard>
  );
}

export function ForgotPasswordPage(): JSX.Element {
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState<string | null>(null);
  const { busy, error, run } = useSubmit();
  function submit(event: Event) {
    event.preventDefault();
    void run(async () => {
      const answer = await api.post<{ message?: string }>('/api/v1/dashboard/password-reset', { email: email.trim() });
      setSent(answer?.message ?? 'If an account uses this address, a link to choose a new password is on its way.');
    });
  }
  return (
    <AuthCard title="Forgot your password?" intro="Enter your email; if an account uses it, we send a link to choose a new password.">
      {sent ? (
        <p class="notice" role="status">
          {sent}
        </p>
      ) : (
        <form onSubmit={submit} class="stack">
          <TextField label="Email" type="email" value={email} onValue={setEmail} autocomplete="email" required />
          <ErrorMessage error={error} />
          <button type="submit" class="button primary wide" disabled={busy}>
            {busy ? 'Sending…' : 'Send the link'}
          </button>
        </form>
      )}
      <p class="auth-links">
        <Link href="/sign-in">Back to sign-in</Link>
      </p>
    </AuthCard>
  );
}

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
  const { busy, error, setError, run } = useSubmit();
  const fields = fieldErrors(error);
  function submit(event: Event) {
    event.preventDefault();
    if (password !== confirm) {
      setError('The two passwords differ.');
      return;
    }
    void run(async () => {
      await api.post('/api/v1/dashboard/password-reset/confirm', { token, password });
      setFlash('Your password was changed. Sign in with the new one.');
      // Every session of the account was revoked, this browser's included when it was the same account.
      if (session) signedOut();
      navigate('/sign-in', { replace: true });
    });
  }
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
        <button type="submit" class="button primary wide" disabled={busy}>
          {busy ? 'Saving…' : 'Save the new password'}
        </button>
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
  const { busy, error, run } = useSubmit();
  const fields = fieldErrors(error);

  useEffect(() => {
    setInvitation(null);
    setLoadError(null);
    if (!token) return;
    api.get<Invitation>(`/api/v1/dashboard/invitations/${encodeURIComponent(token)}`).then(setInvitation, setLoadError);
  }, [token]);

  function submit(event: Event) {
    event.preventDefault();
    if (!invitation) return;
    void run(async () => {
      const body = invitation.accountExists ? { token, password } : { token, name: name.trim(), password };
      const session = await api.post<SessionInfo>('/api/v1/dashboard/invitations/accept', body);
      signedIn(session);
      navigate('/websites', { replace: true });
    });
  }

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
        <button type="submit" class="button primary wide" disabled={busy}>
          {busy ? 'Joining…' : 'Accept the invitation'}
        </button>
      </form>
    </AuthCard>
  );
}
