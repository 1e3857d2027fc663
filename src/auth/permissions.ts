// The permission names of admin-api.md section 5 plus the contract's additions.

export const PERMISSIONS = [
  'analytics:read',
  'api-keys:read',
  'api-keys:write',
  'websites:read',
  'websites:write',
  'settings:read',
  'settings:write',
  'funnels:read',
  'funnels:write',
  'alerts:read',
  'alerts:write',
  'team:read',
  'team:write',
  'goals:read',
  'goals:write',
  'payments:read',
  'payments:write',
  'identify:write',
  // The website API's notes (website-api.md): no route in Sightline yet, but a token may carry them.
  'notes:read',
  'notes:write',
  // Issue 37: saved filter sets, and the whole website's raw data as a download for leaving
  // (stronger than analytics:read: it carries every visitor id and payment, docs/decisions.md).
  'segments:read',
  'segments:write',
  'exports:read',
] as const;

export type Permission = (typeof PERMISSIONS)[number];
export const ALL = '*';
export type Grant = Permission | typeof ALL;
export const GRANTS: readonly Grant[] = [ALL, ...PERMISSIONS];

export function holds(granted: readonly string[], needed: Permission): boolean {
  return granted.includes(ALL) || granted.includes(needed);
}

/** True when every permission in `requested` is also held by `granted`. */
export function isSubset(requested: readonly string[], granted: readonly string[]): boolean {
  if (granted.includes(ALL)) return true;
  if (requested.includes(ALL)) return false;
  return requested.every((permission) => granted.includes(permission));
}
