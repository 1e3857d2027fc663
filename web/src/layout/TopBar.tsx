import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { errorText } from '../components/index.ts';
import { Link, navigate } from '../router.tsx';
import { useSession } from '../session.tsx';

/** The product name, the two places of the dashboard, who is signed in and a way out. */
export function TopBar(): JSX.Element {
  const { session, signedOut } = useSession();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  async function signOut() {
    setBusy(true);
    setError(null);
    try {
      await api.post('/api/v1/dashboard/sign-out', {});
      signedOut();
      navigate('/sign-in');
    } catch (caught) {
      setError(errorText(caught));
    } finally {
      setBusy(false);
    }
  }
  return (
    <header class="topbar">
      <div class="topbar-inner">
        <Link href="/websites" class="brand">
          Sightline
        </Link>
        <nav class="topnav" aria-label="Main">
          <Link href="/websites" current="prefix">
            Websites
          </Link>
          <Link href="/account" current="prefix">
            Account
          </Link>
        </nav>
        <div class="topbar-user">
          <span class="user-email" title={session?.account.email}>
            {session?.account.email}
          </span>
          <button type="button" class="button small" onClick={signOut} disabled={busy}>
            {busy ? 'Signing out…' : 'Sign out'}
          </button>
        </div>
      </div>
      {error && (
        <p class="error topbar-error" role="alert">
          {error}
        </p>
      )}
    </header>
  );
}
