// A tiny router over the History API: the URL is the state. `navigate()` pushes (or replaces) an
// entry and every `useLocation()` re-renders; the back and forward buttons (popstate) do the same.
// Pages that keep a view in the query string (the analytics page) call
// `navigate(pathWithQuery, { replace: true })` so each change does not add a history entry.
import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

export interface Location {
  /** The path without the query string, e.g. `/websites/65f1.../settings`. */
  path: string;
  /** The query string, parsed. A new object whenever the URL changes: treat it as read-only. */
  query: URLSearchParams;
}

type Listener = (location: Location) => void;

const listeners = new Set<Listener>();

function read(): Location {
  return { path: location.pathname, query: new URLSearchParams(location.search) };
}

let current = read();
let currentHref = location.pathname + location.search;

function update(): void {
  const href = location.pathname + location.search;
  if (href === currentHref) return;
  currentHref = href;
  current = read();
  for (const listener of [...listeners]) listener(current);
}

window.addEventListener('popstate', update);

/**
 * Goes to `to` (a path, with an optional query string and hash, on this origin). `replace: true`
 * replaces the current history entry instead of adding one.
 */
export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const url = new URL(to, location.href);
  if (url.origin !== location.origin) {
    location.assign(url.href);
    return;
  }
  const target = url.pathname + url.search + url.hash;
  const pathChanged = url.pathname !== location.pathname;
  if (options.replace) history.replaceState(history.state, '', target);
  else history.pushState(null, '', target);
  if (pathChanged && !options.replace) window.scrollTo(0, 0);
  update();
}

/** The current path and query; the component re-renders when either changes. */
export function useLocation(): Location {
  const [location, setLocation] = useState(current);
  useEffect(() => {
    listeners.add(setLocation);
    // The URL may have changed between the first render and this effect.
    if (location !== current) setLocation(current);
    return () => {
      listeners.delete(setLocation);
    };
  }, []);
  return location;
}

/** The same as `useLocation()`. */
export const useRoute = useLocation;

/** Matches `path` against a pattern such as `/websites/:id/settings`; the named parts, or null. */
export function matchPath(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/').filter(Boolean);
  const have = path.replace(/\/+$/, '').split('/').filter(Boolean);
  if (want.length !== have.length) return null;
  const params: Record<string, string> = {};
  for (let index = 0; index < want.length; index++) {
    const part = want[index]!;
    const value = have[index]!;
    if (part.startsWith(':')) {
      try {
        params[part.slice(1)] = decodeURIComponent(value);
      } catch {
        return null;
      }
    } else if (part !== value) return null;
  }
  return params;
}

type AnchorProps = Omit<JSX.AnchorHTMLAttributes<HTMLAnchorElement>, 'href' | 'onClick'>;

export interface LinkProps extends AnchorProps {
  /** A path on this site, with an optional query string. */
  href: string;
  /** Replace the current history entry instead of adding one. */
  replace?: boolean;
  /** Sets `aria-current="page"` when the current path is `href`'s path (or, with `prefix`, starts with it). */
  current?: boolean | 'prefix';
  children?: ComponentChildren;
  onClick?: (event: MouseEvent) => void;
}

/** An `<a>` that navigates without reloading the page; modified clicks (new tab) behave as usual. */
export function Link({ href, replace, current: markCurrent, onClick, children, ...rest }: LinkProps): JSX.Element {
  const { path } = useLocation();
  const targetPath = href.split(/[?#]/)[0] ?? href;
  const isCurrent =
    markCurrent === 'prefix' ? path === targetPath || path.startsWith(`${targetPath}/`) : markCurrent ? path === targetPath : false;
  // Without `current`, an aria-current given by the caller stands.
  const ariaCurrent = markCurrent === undefined ? rest['aria-current'] : isCurrent ? 'page' : undefined;
  function click(event: MouseEvent) {
    onClick?.(event);
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    if ((rest as { target?: string }).target && (rest as { target?: string }).target !== '_self') return;
    event.preventDefault();
    navigate(href, { replace });
  }
  return (
    <a {...rest} href={href} onClick={click} aria-current={ariaCurrent}>
      {children}
    </a>
  );
}

/** Sends the browser elsewhere as soon as it renders (for redirects between pages). */
export function Redirect({ to }: { to: string }): null {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
}
