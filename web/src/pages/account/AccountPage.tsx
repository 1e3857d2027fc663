// The signed-in account: profile, password, sessions (devices) and account API tokens.
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError, type Account, api } from '../../api.ts';
import { ActionButton, Card, ConfirmDialog, DataTable, ErrorMessage, Loaded, Notice, SubmitButton, TextField, fieldErrors, formatDateTime, useAsync, useConfirm, useSubmit } from '../../components/index.ts';
import { navigate } from '../../router.tsx';
import { setFlash, useSession, useTitle } from '../../session.tsx';
import { TokensCard } from './TokensCard.tsx';

function ProfileCard(): JSX.Element {
  const { session, signedIn } = useSession();
  const [name, setName] = useState(session?.account.name ?? '');
  const { busy, error, notice, onSubmit } = useSubmit();
  const fields = fieldErrors(error);
  const submit = onSubmit(async () => {
    const account = await api.put<Account>('/api/v1/admin/account', { name: name.trim() });
    if (session) signedIn({ ...session, account: { ...session.account, name: account.name } });
    return 'Your name was saved.';
  });
  return (
    <Card title="Profile">
      <form onSubmit={submit} class="stack">
        <div class="field">
          <span class="label-like">Email</span>
          <p class="static-value">{session?.account.email}</p>
        </div>
        <TextField label="Name" value={name} onValue={setName} required maxLength={100} autocomplete="name" error={fields.name} />
        <ErrorMessage error={fields.name ? null : error} />
        <Notice>{notice}</Notice>
        <div>
          <SubmitButton busy={busy} busyLabel="Saving…" label="Save name" />
        </div>
      </form>
    </Card>
  );
}

function PasswordCard(): JSX.Element {
  const { session } = useSession();
  const [currentPassword, setCurrent] = useState('');
  const [newPassword, setNew] = useState('');
  const [confirm, setConfirm] = useState('');
  const { busy, error, notice, onSubmit } = useSubmit();
  const fields = fieldErrors(error);
  const submit = onSubmit(
    async () => {
      await api.put('/api/v1/dashboard/password', { currentPassword, newPassword });
      setCurrent('');
      setNew('');
      setConfirm('');
      return 'Your password was changed. Your other sessions were signed out.';
    },
    {
      check: () => newPassword !== confirm && 'The two new passwords differ.',
      describe: (caught) => (caught instanceof ApiError && (caught.status === 401 || caught.status === 403) ? 'The current password is wrong.' : caught),
    },
  );
  return (
    <Card title="Password">
      <form onSubmit={submit} class="stack">
        {/* For password managers: whose password this is. */}
        <input type="email" name="username" autocomplete="username" value={session?.account.email ?? ''} readOnly hidden />
        <TextField label="Current password" type="password" value={currentPassword} onValue={setCurrent} required autocomplete="current-password" error={fields.currentPassword} />
        <TextField
          label="New password"
          type="password"
          value={newPassword}
          onValue={setNew}
          required
          minLength={10}
          maxLength={200}
          autocomplete="new-password"
          hint="At least 10 characters."
          error={fields.newPassword}
        />
        <TextField label="New password, again" type="password" value={confirm} onValue={setConfirm} required minLength={10} maxLength={200} autocomplete="new-password" />
        <ErrorMessage error={fields.currentPassword || fields.newPassword ? null : error} />
        <Notice>{notice}</Notice>
        <div>
          <SubmitButton busy={busy} busyLabel="Saving…" label="Change password" />
        </div>
      </form>
    </Card>
  );
}

interface DashboardSession {
  id: string;
  current: boolean;
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
  userAgent: string | null;
}

/** "Firefox on Linux" from a user agent, good enough to tell devices apart. */
function describeAgent(agent: string | null): string {
  if (!agent) return 'Unknown device';
  const browser = /Edg\//.test(agent)
    ? 'Edge'
    : /Firefox\//.test(agent)
      ? 'Firefox'
      : /Chrome\/|Chromium\//.test(agent)
        ? 'Chrome'
        : /Safari\//.test(agent)
          ? 'Safari'
          : /curl|node|undici/i.test(agent)
            ? 'A program'
            : 'A browser';
  const system = /Android/.test(agent)
    ? 'Android'
    : /iPhone|iPad/.test(agent)
      ? 'iOS'
      : /Mac OS X|Macintosh/.test(agent)
        ? 'macOS'
        : /Windows/.test(agent)
          ? 'Windows'
          : /Linux|X11/.test(agent)
            ? 'Linux'
            : '';
  return system ? `${browser} on ${system}` : browser;
}

function SessionsCard(): JSX.Element {
  const { signedOut } = useSession();
  const sessions = useAsync(() => api.list<DashboardSession>('/api/v1/dashboard/sessions'), []);
  const [everywhere, setEverywhere] = useState(false);

  function leave(message: string) {
    setFlash(message);
    signedOut();
    navigate('/sign-in', { replace: true });
  }

  const revocation = useConfirm((revoking: DashboardSession) => ({
    title: revoking.current ? 'Sign out this browser?' : 'Revoke this session?',
    message: revoking.current ? 'You will need to sign in again here.' : 'That browser is signed out at its next request.',
    confirmLabel: revoking.current ? 'Sign out' : 'Revoke',
    onConfirm: async () => {
      await api.delete(`/api/v1/dashboard/sessions/${revoking.id}`);
      if (revoking.current) leave('You are signed out.');
      else sessions.reload();
    },
  }));

  return (
    <Card
      title="Sessions"
      actions={
        <button type="button" class="button small danger-text" onClick={() => setEverywhere(true)}>
          Sign out everywhere
        </button>
      }
    >
      <p class="muted">The browsers signed in to your account. A session ends 7 days after its last use, 30 days after sign-in at most.</p>
      <Loaded state={sessions}>
        {(list) => (
          <DataTable label="Sessions" columns={['Device', 'Signed in', 'Last used', 'Expires']} actions>
            {list.map((item) => (
              <tr key={item.id}>
                <td>
                  <span title={item.userAgent ?? undefined}>{describeAgent(item.userAgent)}</span>
                  {item.current && <span class="badge">this browser</span>}
                </td>
                <td>{formatDateTime(item.createdAt)}</td>
                <td>{formatDateTime(item.lastSeenAt)}</td>
                <td>{formatDateTime(item.expiresAt)}</td>
                <td class="actions">
                  <ActionButton
                    label={item.current ? 'Sign out' : 'Revoke'}
                    about={`the session of ${describeAgent(item.userAgent)} signed in ${formatDateTime(item.createdAt)}`}
                    danger
                    onClick={() => revocation.ask(item)}
                  />
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </Loaded>
      {revocation.dialog}
      <ConfirmDialog
        open={everywhere}
        title="Sign out everywhere?"
        message="Every browser signed in to your account is signed out, this one included. Account API tokens keep working."
        confirmLabel="Sign out everywhere"
        danger
        onConfirm={async () => {
          await api.post('/api/v1/dashboard/sign-out-everywhere', {});
          leave('You are signed out everywhere.');
        }}
        onClose={() => setEverywhere(false)}
      />
    </Card>
  );
}

export function AccountPage(): JSX.Element {
  useTitle('Account');
  return (
    <>
      <h1>Account</h1>
      <div class="account-grid">
        <ProfileCard />
        <PasswordCard />
      </div>
      <SessionsCard />
      <TokensCard />
    </>
  );
}
