import type { Role } from './policy.ts';

/** Who is calling, as established by plugins/authenticate.ts from the Bearer credential or the dashboard's session cookie. */
export type Principal = TokenPrincipal | SessionPrincipal | ApiKeyPrincipal;

/** A caller acting for an account: an account token, or a dashboard session (full rights). */
export type AccountPrincipal = TokenPrincipal | SessionPrincipal;

export interface TokenPrincipal {
  kind: 'token';
  tokenId: string;
  accountId: string;
  permissions: string[];
  /** Empty means every website the account can access, now and later. */
  websiteIds: string[];
}

/** A signed-in dashboard user: the account's full rights, under the same role matrix as a token. */
export interface SessionPrincipal {
  kind: 'session';
  sessionId: string;
  accountId: string;
  permissions: string[];
  websiteIds: string[];
  /** When the password was last entered in this session. */
  signedInAt: string;
  /** What a cookie-authenticated write must send in X-CSRF-Token. */
  csrfToken: string;
}

export interface ApiKeyPrincipal {
  kind: 'apiKey';
  apiKeyId: string;
  websiteId: string;
  /** The account that owns the key's website. */
  accountId: string;
}

/** The website a website-scoped route acts on, and the caller's role there. */
export interface WebsiteAccess {
  websiteId: string;
  role: Role;
}

export function tokenAllowsWebsite(principal: AccountPrincipal, websiteId: string): boolean {
  return principal.websiteIds.length === 0 || principal.websiteIds.includes(websiteId);
}
