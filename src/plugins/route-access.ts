import type { Permission } from '../auth/permissions.ts';
import type { WebsiteAction } from '../auth/policy.ts';

/**
 * What a route needs, declared in its `config.access`. The route guard refuses to boot a route
 * that declares nothing, so a forgotten check cannot ship.
 */
export type RouteAccess = PublicAccess | AccountAccess | WebsiteScopedAccess;

export interface PublicAccess {
  public: true;
}

export interface AccountAccess {
  scope: 'account';
  permission: Permission;
  /** Whether a website API key (df_) may call it. */
  apiKey: boolean;
  /** Only a dashboard session may call it (its own routes: sessions, password, website deletion). */
  sessionOnly?: boolean;
  /**
   * Called without any session (no Authorization header, and no session cookie or one whose
   * session has ended), the handler runs with no principal and answers for "no one" instead of the
   * guard's 401: GET /api/v1/dashboard/session, which the dashboard asks before anyone signs in.
   */
  answersSignedOut?: boolean;
}

export interface WebsiteScopedAccess {
  scope: 'website';
  permission: Permission;
  /** What the route does to the website, for the role matrix. */
  action: WebsiteAction;
  apiKey: boolean;
  sessionOnly?: boolean;
  /** Where the website id is read from; a df_ key may leave a query id out. Default: path. */
  websiteIdIn?: 'path' | 'query';
}

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: RouteAccess;
  }
}
