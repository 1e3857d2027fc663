// Boots the dashboard (who is signed in, whether setup is needed), then routes: signed-out pages
// when no one is, the first-run setup while no account exists, the signed-in pages otherwise.
import type { JSX } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { type SessionInfo, api, rememberSession, whenSessionLost } from './api.ts';
import { ErrorMessage, Loading } from './components/index.ts';
import { TopBar } from './layout/TopBar.tsx';
import { lazyComponent } from './lazy.tsx';
import { NotFound } from './pages/NotFound.tsx';
import { InvitePage, ResetPasswordPage } from './pages/mailed-links.tsx';
import { ForgotPasswordPage, SetupPage, SignInPage, SignUpPage } from './pages/signed-out.tsx';
import { WebsitesPage } from './pages/WebsitesPage.tsx';
import { WebsiteLayout } from './pages/WebsiteLayout.tsx';
import { Redirect, matchPath, useLocation } from './router.tsx';
import { SessionContext, type SessionState, type SetupState, setFlash } from './session.tsx';

const AccountPage = lazyComponent(() => import('./pages/account/AccountPage.tsx').then((module) => module.AccountPage));

interface Boot {
  session: SessionInfo | null;
  setup: SetupState;
}

async function boot(): Promise<Boot> {
  const [session, setup] = await Promise.all([
    // Signed out is an empty answer, not a 401: the first page logs no error.
    api.get<SessionInfo | undefined>('/api/v1/dashboard/session').then((session) => session ?? null),
    api.get<SetupState>('/api/v1/dashboard/setup'),
  ]);
  return { session, setup: { setupRequired: Boolean(setup?.setupRequired), signUpOpen: Boolean(setup?.signUpOpen) } };
}

const SIGNED_OUT_PAGES: Record<string, () => JSX.Element> = {
  '/sign-in': SignInPage,
  '/sign-up': SignUpPage,
  '/forgot-password': ForgotPasswordPage,
  '/reset-password': ResetPasswordPage,
  '/invite': InvitePage,
};

/** Pages reachable whether or not someone is signed in (a mailed link may open in either state). */
const EITHER_STATE = new Set(['/reset-password', '/invite']);

function signedOutRoute(path: string, query: URLSearchParams, setup: SetupState): JSX.Element {
  if (setup.setupRequired) return path === '/setup' ? <SetupPage /> : <Redirect to="/setup" />;
  if (path === '/sign-up' && !setup.signUpOpen) return <Redirect to="/sign-in" />;
  const Page = SIGNED_OUT_PAGES[path];
  if (Page) return <Page />;
  const search = query.toString();
  const wanted = path + (search ? `?${search}` : '');
  if (path === '/' || path === '/setup' || path === '/websites') return <Redirect to="/sign-in" />;
  return <Redirect to={`/sign-in?next=${encodeURIComponent(wanted)}`} />;
}

function signedInRoute(path: string): JSX.Element {
  if (EITHER_STATE.has(path)) {
    const Page = SIGNED_OUT_PAGES[path]!;
    return <Page />;
  }
  if (path === '/' || path === '/setup' || path === '/sign-in' || path === '/sign-up') return <Redirect to="/websites" />;
  if (path === '/forgot-password') return <Redirect to="/account" />;
  if (path === '/websites' || path === '/websites/') return <WebsitesPage />;
  const website = matchPath('/websites/:id', path) ?? matchPath('/websites/:id/settings', path);
  if (website) return <WebsiteLayout key={website.id} websiteId={website.id!} section={path.endsWith('/settings') ? 'settings' : 'analytics'} />;
  if (path === '/account' || path.startsWith('/account/')) return <AccountPage />;
  return <NotFound />;
}

export function App(): JSX.Element {
  const [state, setState] = useState<Boot | null>(null);
  const [error, setError] = useState<unknown>(null);
  const { path, query } = useLocation();
  const mainRef = useRef<HTMLElement>(null);
  const previousPath = useRef(path);

  function load() {
    setError(null);
    boot().then(
      (booted) => {
        rememberSession(booted.session);
        setState(booted);
      },
      (caught: unknown) => setError(caught),
    );
  }

  useEffect(load, []);

  useEffect(() => {
    whenSessionLost(() => {
      setFlash('Your session has ended. Sign in again.');
      setState((current) => (current ? { ...current, session: null } : current));
    });
    return () => whenSessionLost(null);
  }, []);

  // A new page moves the focus to the top of <main>, so screen readers start reading there.
  useEffect(() => {
    if (previousPath.current === path) return;
    previousPath.current = path;
    mainRef.current?.focus({ preventScroll: true });
  }, [path]);

  const context = useMemo<SessionState | null>(
    () =>
      state && {
        session: state.session,
        setup: state.setup,
        signedIn: (session) => {
          rememberSession(session);
          setState((current) => current && { session, setup: { ...current.setup, setupRequired: false } });
        },
        signedOut: () => {
          rememberSession(null);
          setState((current) => current && { ...current, session: null });
        },
      },
    [state],
  );

  let content: JSX.Element;
  if (error) content = <ErrorMessage error={error} onRetry={load} />;
  else if (!context) content = <Loading label="Loading Sightline…" />;
  else if (context.session) content = signedInRoute(path);
  else content = signedOutRoute(path, query, context.setup);

  const signedIn = Boolean(context?.session);
  const narrow = !signedIn || path in SIGNED_OUT_PAGES;
  return (
    <SessionContext.Provider value={context}>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      {signedIn ? <TopBar /> : <header class="brand-only"><span class="brand">Sightline</span></header>}
      <main id="main" ref={mainRef} tabIndex={-1} class={narrow ? 'page narrow' : 'page'}>
        {content}
      </main>
    </SessionContext.Provider>
  );
}
