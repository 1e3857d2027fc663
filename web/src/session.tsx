// Who is signed in, for every page: the session the server confirmed (or null) and whether the
// first-run setup or open sign-up is available.
import { createContext } from 'preact';
import { useContext, useEffect } from 'preact/hooks';
import type { SessionInfo } from './api.ts';

export interface SetupState {
  setupRequired: boolean;
  signUpOpen: boolean;
}

export interface SessionState {
  session: SessionInfo | null;
  setup: SetupState;
  /** After a route that signs in answered a SessionInfo (or a profile change). */
  signedIn: (session: SessionInfo) => void;
  /** After signing out, or when the server no longer knows the session. */
  signedOut: () => void;
}

export const SessionContext = createContext<SessionState | null>(null);

export function useSession(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSession() outside <SessionContext.Provider>');
  return state;
}

let flash: string | null = null;

/** A message for the next page to show once ("Your password was changed; sign in."). */
export function setFlash(message: string): void {
  flash = message;
}

export function takeFlash(): string | null {
  const message = flash;
  flash = null;
  return message;
}

/** Where to go after signing in: a `?next=` path on this site, else the websites. */
export function nextPath(query: URLSearchParams): string {
  const next = query.get('next');
  return next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\') ? next : '/websites';
}

/** Sets the tab's title: "Page · Sightline". */
export function setTitle(page: string): void {
  document.title = page ? `${page} · Sightline` : 'Sightline';
}

/** `setTitle` once the page renders, and again when `page` changes. */
export function useTitle(page: string): void {
  useEffect(() => setTitle(page), [page]);
}
