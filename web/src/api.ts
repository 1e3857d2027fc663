// The dashboard's one way to talk to the server: the documented routes, with the session cookie
// (sent by the browser) and, on writes, the session's CSRF token. Every page goes through here.

export interface Account {
  id: string;
  email: string;
  name: string;
}

export interface SessionInfo {
  account: Account;
  sessionId: string;
  csrfToken: string;
  signedInAt: string;
  expiresAt: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details: { path: string; message: string }[] = [],
  ) {
    super(message);
  }
}

let csrfToken: string | null = null;
let onSessionLost: (() => void) | null = null;
/** Set on a shared dashboard (/share/<slug>): every read goes to that link's read-only API. */
let sharedSlug: string | null = null;

/** Turns the API layer into a shared dashboard's: see sharedPath(). */
export function enterSharedDashboard(slug: string): void {
  sharedSlug = slug;
}

/** Whether this page is a shared dashboard (no settings, no writes, no visitor-level data). */
export function isSharedDashboard(): boolean {
  return sharedSlug !== null;
}

const ADMIN_WEBSITE = /^\/api\/v1\/admin\/websites\/[^/]+\/(goals\/customizations|funnels|notes)$/;

/**
 * On a shared dashboard, the analytics page's reads go to the link's API, which answers the same
 * shapes for the link's website only: /api/v1/analytics/<read> becomes /api/v1/share/<slug>/analytics/<read>
 * (without websiteId), and the two settings the page displays (goal names and colours, funnels)
 * come from the link too. Notes stay private to the team: an empty list. Anything else is refused
 * here, before a request is made. Null: answer with `data: []` without asking.
 */
function sharedPath(method: string, path: string, query?: Query): { path: string; query?: Query } | null {
  const base = `/api/v1/share/${encodeURIComponent(sharedSlug!)}`;
  if (path.startsWith(base)) return { path, query };
  const rest = { ...query };
  delete rest.websiteId;
  if (method === 'GET' && path.startsWith('/api/v1/analytics/') && !path.startsWith('/api/v1/analytics/realtime/map')) {
    return { path: base + path.slice('/api/v1'.length), query: rest };
  }
  const admin = ADMIN_WEBSITE.exec(path);
  if (method === 'GET' && admin) return admin[1] === 'notes' ? null : { path: `${base}/${admin[1]}`, query: rest };
  throw new ApiError(403, 'This is not available on a shared dashboard');
}

/** Remembers the CSRF token of the session the server just confirmed or created. */
export function rememberSession(session: SessionInfo | null): void {
  csrfToken = session?.csrfToken ?? null;
}

/**
 * What to do when the server answers 401 to a signed-in page (the session expired or was revoked
 * elsewhere): the app goes back to the sign-in page.
 */
export function whenSessionLost(handler: (() => void) | null): void {
  onSessionLost = handler;
}

type Query = Record<string, string | number | boolean | undefined | null>;

function withQuery(path: string, query?: Query): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') params.set(key, String(value));
  }
  const text = params.toString();
  return text ? `${path}${path.includes('?') ? '&' : '?'}${text}` : path;
}

interface RequestOptions {
  query?: Query;
  body?: unknown;
  /** Sent as the raw body in its own content type (an upload). */
  file?: { data: Blob; contentType: string };
}

/** The whole success envelope, for routes whose answer has siblings beside `data` (pagination). */
export async function request<T = unknown>(
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<{ data: T[] } & Record<string, unknown>> {
  if (sharedSlug !== null) {
    const target = sharedPath(method, path, options.query);
    if (!target) return { data: [] };
    path = target.path;
    options = { ...options, query: target.query };
  }
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.file) headers['content-type'] = options.file.contentType;
  if (method !== 'GET' && method !== 'HEAD' && csrfToken) headers['x-csrf-token'] = csrfToken;
  const response = await fetch(withQuery(path, options.query), {
    method,
    headers,
    credentials: 'same-origin',
    body: options.file ? options.file.data : options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await response.text();
  type Answer = { data: T[]; status?: string; error?: { message?: string; details?: ApiError['details'] } } & Record<string, unknown>;
  let json: Answer | null = null;
  try {
    json = text ? (JSON.parse(text) as Answer) : null;
  } catch {
    json = null;
  }
  if (!response.ok || json?.status === 'error') {
    const error = json?.error;
    // A 401 from a route that signs in means a wrong password, not a lost session.
    const signingIn = /^\/api\/v1\/(dashboard\/(sign-in|sign-up|setup|reauthenticate|invitations|password)|share\/[^/]+\/unlock)/.test(path);
    // On a shared dashboard, a 401 means the link's password is asked again (changed meanwhile).
    if (response.status === 401 && (csrfToken || sharedSlug !== null) && !signingIn) {
      csrfToken = null;
      onSessionLost?.();
    }
    throw new ApiError(response.status, error?.message ?? `Request failed (${response.status})`, error?.details ?? []);
  }
  return json ?? { data: [] };
}

/** `data` of an answer (admin routes always answer a list). */
export async function list<T = unknown>(method: string, path: string, options?: RequestOptions): Promise<T[]> {
  return (await request<T>(method, path, options)).data;
}

/** The first item of `data`: what a create, a read of one object or an action answers. */
export async function one<T = unknown>(method: string, path: string, options?: RequestOptions): Promise<T> {
  const data = await list<T>(method, path, options);
  return data[0] as T;
}

export const api = {
  get: <T>(path: string, query?: Query) => one<T>('GET', path, { query }),
  list: <T>(path: string, query?: Query) => list<T>('GET', path, { query }),
  post: <T>(path: string, body: unknown = {}) => one<T>('POST', path, { body }),
  put: <T>(path: string, body: unknown) => one<T>('PUT', path, { body }),
  patch: <T>(path: string, body: unknown) => one<T>('PATCH', path, { body }),
  delete: <T>(path: string, body?: unknown) => one<T>('DELETE', path, { body }),
  /** A file sent as the raw body (an import's zip). */
  upload: <T>(path: string, data: Blob, contentType: string, query?: Query) => one<T>('POST', path, { query, file: { data, contentType } }),
};
