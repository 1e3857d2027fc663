// The pages of someone not signed in: first-run setup, sign-in, sign-up and forgotten password.
// Those of the mailed links (password reset, invitation) are in mailed-links.tsx.
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError, type SessionInfo, api } from '../api.ts';
import { ErrorMessage, SubmitButton, TextField, errorText, fieldErrors, useSubmit } from '../components/index.ts';
import { Link, navigate, useLocation } from '../router.tsx';
import { nextPath, takeFlash, useSession } from '../session.tsx';
import { AuthCard, PasswordField } from './auth-card.tsx';

/** The fields of a new account: setup and sign-up. */
function NewAccountForm({ endpoint, submitLabel }: { endpoint: string; submitLabel: string }): JSX.Element {
  const { signedIn } = useSession();
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const { busy, error, onSubmit } = useSubmit();
  const fields = fieldErrors(error);
  const submit = onSubmit(async () => {
    const session = await api.post<SessionInfo>(endpoint, { email: email.trim(), name: name.trim(), password });
    signedIn(session);
    navigate('/websites', { replace: true });
  });
  return (
    <form onSubmit={submit} class="stack">
      <TextField label="Email" type="email" value={email} onValue={setEmail} autocomplete="email" required error={fields.email} />
      <TextField label="Name" value={name} onValue={setName} autocomplete="name" required maxLength={100} error={fields.name} />
      <PasswordField value={password} onValue={setPassword} isNew error={fields.password} />
      <ErrorMessage error={error} />
      <SubmitButton busy={busy} busyLabel="Creating…" label={submitLabel} class="button primary wide" />
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
  const { busy, error, onSubmit } = useSubmit();
  const submit = onSubmit(async () => {
    const session = await api.post<SessionInfo>('/api/v1/dashboard/sign-in', { email: email.trim(), password });
    signedIn(session);
    navigate(nextPath(query), { replace: true });
  });
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
        <SubmitButton busy={busy} busyLabel="Signing in…" label="Sign in" class="button primary wide" />
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
  const { busy, error, notice: sent, onSubmit } = useSubmit();
  const submit = onSubmit(async () => {
    const answer = await api.post<{ message?: string }>('/api/v1/dashboard/password-reset', { email: email.trim() });
    return answer?.message ?? 'If an account uses this address, a link to choose a new password is on its way.';
  });
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
          <SubmitButton busy={busy} busyLabel="Sending…" label="Send the link" class="button primary wide" />
        </form>
      )}
      <p class="auth-links">
        <Link href="/sign-in">Back to sign-in</Link>
      </p>
    </AuthCard>
  );
}
