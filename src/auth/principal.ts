import type { Role } from './policy.ts';

/** Who is calling, as established by plugins/authenticate.ts from the Bearer credential. */
export type Principal = TokenPrincipal | ApiKeyPrincipal;

export interface TokenPrincipal {
  kind: 'token';
  tokenId: string;
  accountId: string;
  permissions: string[];
  /** Empty means every website the account can access, now and later. */
  websiteIds: string[];
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

export function tokenAllowsWebsite(principal: TokenPrincipal, websiteId: string): boolean {
  return principal.websiteIds.length === 0 || principal.websiteIds.includes(websiteId);
}
