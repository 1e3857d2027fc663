// What a URL may show in a log line or an answer. People paste credentials into URLs (a token as
// ?access_token=, a provider key as ?api_key=, a token typed where an id belongs), so:
// - no query value is ever shown, only the names (`?token=[redacted]`);
// - a path segment that reads like a credential is masked, while ids (24 hex characters, UUIDs)
//   and route words stay readable.

export const REDACTED = '[redacted]';

/** Credentials with a known shape: ours, and the common providers' ones. */
const KNOWN_SHAPES = [
  /^dft?_[0-9A-Za-z]{8,}/, // Sightline tokens and API keys
  /^shr_[0-9A-Za-z]{8,}/, // Sightline shared dashboard links
  /^(sk|rk|pk)_(live|test)_/, // Stripe-style secret, restricted and publishable keys
  /^whsec_/, // webhook signing secrets
  /^eyJ[0-9A-Za-z_-]{8,}/, // JWTs and other base64url JSON
  /^(ghp|gho|ghu|ghs|ghr|github_pat)_[0-9A-Za-z_]{10,}/, // GitHub
  /^xox[abposr]-[0-9A-Za-z-]{8,}/, // Slack
  /^xapp-[0-9A-Za-z-]{8,}/, // Slack app-level
  /^glpat-[0-9A-Za-z_-]{10,}/, // GitLab
  /^npm_[0-9A-Za-z]{20,}/, // npm
  /^AKIA[0-9A-Z]{16}$/, // AWS access key id
  /^AIza[0-9A-Za-z_-]{30,}/, // Google API key
];

/** Long hexadecimal strings: digests and hex-encoded secrets (24-hex ids are let through below). */
const LONG_HEX = /^[0-9a-f]{32,}$/i;

/** Readable identifiers that are not secrets. */
const PLAIN_IDS = [/^[0-9a-f]{24}$/i, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i];

/** Long, mixed, random-looking text: an opaque secret of no known shape. */
const MIN_OPAQUE_LENGTH = 20;
const OPAQUE_CHARACTERS = /^[0-9A-Za-z_\-.~+/=]+$/;
const MIN_BITS_PER_CHARACTER = 3.5;

function bitsPerCharacter(text: string): number {
  const counts = new Map<string, number>();
  for (const character of text) counts.set(character, (counts.get(character) ?? 0) + 1);
  let bits = 0;
  for (const count of counts.values()) {
    const p = count / text.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

function looksRandom(text: string): boolean {
  if (text.length < MIN_OPAQUE_LENGTH || !OPAQUE_CHARACTERS.test(text)) return false;
  if (!/[0-9]/.test(text) || !/[A-Za-z]/.test(text)) return false;
  // Lower-case words and numbers joined by - _ . ~ (a slug, a file name) are not secrets.
  if (text.split(/[-_.~]/).every((part) => /^([a-z]*|[0-9]*)$/.test(part))) return false;
  return bitsPerCharacter(text) >= MIN_BITS_PER_CHARACTER;
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function isCredential(text: string): boolean {
  if (PLAIN_IDS.some((shape) => shape.test(text))) return false;
  return KNOWN_SHAPES.some((shape) => shape.test(text)) || LONG_HEX.test(text) || looksRandom(text);
}

/** What splits a segment into words: `Bearer dft_...`, `token:dft_...`, `"dft_..."`. */
const WORD_SEPARATORS = /[^0-9A-Za-z_\-.~+]+/;

/** Whether a path segment (or any single word) reads like a credential, or holds one. */
export function looksLikeCredential(segment: string): boolean {
  const text = decoded(segment);
  return isCredential(text) || text.split(WORD_SEPARATORS).some((word) => word !== text && isCredential(word));
}

/** A URL path with every credential-shaped segment masked. */
export function redactPath(path: string): string {
  return path
    .split('/')
    .map((segment) => (looksLikeCredential(segment) ? REDACTED : segment))
    .join('/');
}

/** The query's names only: `a=1&b=2` becomes `a=[redacted]&b=[redacted]`. */
function redactQuery(query: string): string {
  return query
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals === -1 ? pair : pair.slice(0, equals);
      const shownName = looksLikeCredential(name) ? REDACTED : name;
      return equals === -1 ? shownName : `${shownName}=${REDACTED}`;
    })
    .join('&');
}

/**
 * A request URL (path and query, as the request line has it) safe to log or answer: no query
 * value, no fragment, no credential-shaped segment.
 */
export function redactUrl(url: string): string {
  const fragmentAt = url.indexOf('#');
  const withoutFragment = fragmentAt === -1 ? url : url.slice(0, fragmentAt);
  const queryAt = withoutFragment.indexOf('?');
  if (queryAt === -1) return redactPath(withoutFragment);
  const query = withoutFragment.slice(queryAt + 1);
  return `${redactPath(withoutFragment.slice(0, queryAt))}?${query === '' ? '' : redactQuery(query)}`;
}

/**
 * The path of an absolute or relative URL without its query, fragment and user info, its
 * credential-shaped segments masked: what is kept of a visitor's referrer.
 */
export function stripUrlSecrets(url: string): string {
  const cut = url.search(/[?#]/);
  const kept = cut === -1 ? url : url.slice(0, cut);
  // scheme://user:password@host/... loses user:password@
  const withoutUserInfo = kept.replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^/]*@/, '$1');
  const authorityEnd = withoutUserInfo.match(/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/]*/)?.[0].length ?? 0;
  return withoutUserInfo.slice(0, authorityEnd) + redactPath(withoutUserInfo.slice(authorityEnd));
}

/** One word of free text: a URL or path is redacted as one, any other word masked if secret-like. */
function redactWord(word: string): string {
  if (word.includes('/') || word.includes('?')) return redactUrl(word);
  return looksLikeCredential(word) ? REDACTED : word;
}

/**
 * Free text (a log message, an error's message or stack) with every URL in it redacted and every
 * credential-shaped word masked: Fastify and Node quote request URLs in some of their messages.
 */
export function redactText(text: string): string {
  return text.replace(/[^\s"'`<>()[\]{},;]+/g, redactWord);
}
