// A shared dashboard (/share/<slug>): the website's analytics page, read-only, for whoever holds
// the link, without a session. It asks the link's state first: unknown or revoked links (or a
// website that stopped sharing) say so; a link with a password asks for it (the server then sets
// a cookie for this link). With ?embed=true the page drops its chrome, for an iframe.
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, whenSessionLost } from '../api.ts';
import { ErrorMessage, Loading, SubmitButton, useSubmit } from '../components/index.ts';
import { lazyComponent } from '../lazy.tsx';
import { PasswordField } from '../pages/auth-card.tsx';
import { useTitle } from '../session.tsx';

const AnalyticsPage = lazyComponent<{ websiteId: string }>(() => import('../analytics/AnalyticsPage.tsx').then((module) => module.AnalyticsPage));

interface ShareState {
  linkName: string;
  passwordRequired: boolean;
  unlocked: boolean;
}

/** The page's id for the website: the share API ignores it (the link names the website). */
const SHARED_WEBSITE = 'shared';

function PasswordPage({ slug, linkName, onUnlocked }: { slug: string; linkName: string; onUnlocked: () => void }): JSX.Element {
  const [password, setPassword] = useState('');
  const { busy, error, onSubmit } = useSubmit();
  useTitle('Password required');
  const submit = onSubmit(async () => {
    await api.post(`/api/v1/share/${encodeURIComponent(slug)}/unlock`, { password });
    onUnlocked();
  });
  return (
    <div class="auth">
      <h1>Password required</h1>
      <p class="auth-intro">The shared dashboard “{linkName}” is protected. Enter its password to see it.</p>
      <div class="card">
        <form onSubmit={submit} class="stack">
          <PasswordField value={password} onValue={setPassword} hint={null} />
          <ErrorMessage error={error} />
          <SubmitButton busy={busy} busyLabel="Checking…" label="Show the dashboard" class="button primary wide" />
        </form>
      </div>
    </div>
  );
}

function Unavailable(): JSX.Element {
  useTitle('Shared dashboard unavailable');
  return (
    <div class="auth">
      <h1>This shared dashboard is not available</h1>
      <p class="auth-intro">The link is wrong, was revoked, or its website no longer shares its dashboard. Ask whoever sent it for a new one.</p>
    </div>
  );
}

export function SharedDashboard({ slug, embed }: { slug: string; embed: boolean }): JSX.Element {
  const [state, setState] = useState<ShareState | null>(null);
  const [error, setError] = useState<unknown>(null);
  useTitle(state ? `Shared dashboard: ${state.linkName}` : 'Shared dashboard');

  function load() {
    setError(null);
    api.get<ShareState>(`/api/v1/share/${encodeURIComponent(slug)}`).then(setState, setError);
  }

  useEffect(() => {
    load();
    // The password changed, or the unlock expired: ask again.
    whenSessionLost(() => setState((current) => current && { ...current, unlocked: false }));
    return () => whenSessionLost(null);
  }, [slug]);

  let content: JSX.Element;
  if (error instanceof ApiError && (error.status === 404 || error.status === 400)) content = <Unavailable />;
  else if (error) content = <ErrorMessage error={error} onRetry={load} />;
  else if (!state) content = <Loading label="Loading the shared dashboard…" />;
  else if (!state.unlocked) content = <PasswordPage slug={slug} linkName={state.linkName} onUnlocked={() => setState({ ...state, unlocked: true })} />;
  else if (embed) content = <AnalyticsPage websiteId={SHARED_WEBSITE} />;
  else {
    content = (
      <>
        <div class="page-head">
          <h1>{state.linkName}</h1>
          <p class="muted">A read-only shared dashboard</p>
        </div>
        <AnalyticsPage websiteId={SHARED_WEBSITE} />
      </>
    );
  }

  if (embed) {
    return (
      <main id="main" class="page embed">
        {content}
      </main>
    );
  }
  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="brand-only">
        <span class="brand">Sightline</span>
      </header>
      <main id="main" tabIndex={-1} class={state?.unlocked ? 'page' : 'page narrow'}>
        {content}
      </main>
    </>
  );
}
