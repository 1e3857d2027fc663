// The tables whose rows decide who may call: a credential's digest, revocation, expiry and
// scope, a session's sign-in, and the roles that members hold. A write to them must reach every
// cache of principals (src/auth/principal-cache.ts) before the next request is authenticated.

/** The table a credential write names (cascading deletes of websites and accounts included). */
const WRITE =
  /^\s*(?:insert\s+into|update|delete\s+from)\s+"?(access_tokens|api_keys|dashboard_sessions|website_members|websites|accounts)"?\s+([\s\S]*)$/i;

/** Marking a credential as used, which changes nothing a request is allowed to do. */
const TOUCH = /^set\s+"?(?:last_used_at|last_seen_at)"?\s*=\s*(?:\?|\$\d+)\s+where\b/i;

/** Whether a statement's SQL writes to the credential tables. */
export function isCredentialWrite(sql: string): boolean {
  const match = WRITE.exec(sql);
  if (!match) return false;
  const [, table, rest] = match;
  const verb = sql.trimStart().slice(0, 6).toLowerCase();
  // A website or account that is created or renamed changes no one's rights; deleting one takes
  // its members, keys, tokens and sessions with it.
  if (table === 'websites' || table === 'accounts') return verb === 'delete';
  return !(verb === 'update' && TOUCH.test(rest!));
}

/**
 * PostgreSQL: the channel on which every instance hears that another one (or an operator's SQL)
 * changed a credential table; the payload names the schema, since several installations may
 * share one database. Raised by the triggers of migration 0011.
 */
export const CREDENTIALS_CHANNEL = 'sightline_credentials';
