// Where a visit came from: the referring host, and a source name for the hosts people know by name.
//
// The names follow Snowplow's referer-parser list, as Plausible shows them. The npm packages that
// carry such a list were not used. referer-parser is unmaintained (a single release, 0.0.3, on
// js-yaml 2). @tryghost/referrer-parser is maintained and synchronous, but it matches hosts by
// prefix (google.com.evil.example is Google to it; www.baidu.com is Baidu, baidu.com is not), sorts
// its 2,400 entries on every call, spells some names otherwise (Youtube, StackOverflow) and lacks
// ChatGPT, Claude, Perplexity, Gemini, TikTok, Product Hunt and Medium. So the list is the small
// table below, its one home.

export interface ReferrerFacts {
  /** The referring host, lower case, without a leading `www.`; null for Direct/None. */
  host: string | null;
  /** A well-known name for the host (Google, Reddit, …), else the host itself; 'Direct/None' when there is none. */
  source: string;
}

export const DIRECT = 'Direct/None';

/**
 * Source names by host. A host matches its own entry and those of the domains it is under, on
 * label boundaries (old.reddit.com is Reddit, notreddit.com is not); the longest match wins
 * (gemini.google.com is Gemini, not Google). Sorted by name, then host.
 */
const SOURCES: ReadonlyMap<string, string> = new Map(
  Object.entries({
    'baidu.com': 'Baidu',
    'bing.com': 'Bing',
    'search.brave.com': 'Brave Search',
    'chat.openai.com': 'ChatGPT',
    'chatgpt.com': 'ChatGPT',
    'claude.ai': 'Claude',
    'discord.com': 'Discord',
    'discord.gg': 'Discord',
    'discordapp.com': 'Discord',
    'duckduckgo.com': 'DuckDuckGo',
    'ecosia.org': 'Ecosia',
    'facebook.com': 'Facebook',
    'fb.com': 'Facebook',
    'fb.me': 'Facebook',
    'gemini.google.com': 'Gemini',
    'github.com': 'GitHub',
    'news.ycombinator.com': 'Hacker News',
    'instagram.com': 'Instagram',
    'linkedin.com': 'LinkedIn',
    'lnkd.in': 'LinkedIn',
    'medium.com': 'Medium',
    'perplexity.ai': 'Perplexity',
    'pin.it': 'Pinterest',
    'pinterest.com': 'Pinterest',
    'producthunt.com': 'Product Hunt',
    'redd.it': 'Reddit',
    'reddit.com': 'Reddit',
    'slack.com': 'Slack',
    'stackoverflow.com': 'Stack Overflow',
    'substack.com': 'Substack',
    't.me': 'Telegram',
    'telegram.me': 'Telegram',
    'telegram.org': 'Telegram',
    'tiktok.com': 'TikTok',
    't.co': 'Twitter',
    'twitter.com': 'Twitter',
    'x.com': 'Twitter',
    'wa.me': 'WhatsApp',
    'whatsapp.com': 'WhatsApp',
    'yahoo.com': 'Yahoo!',
    'yandex.com': 'Yandex',
    'youtu.be': 'YouTube',
    'youtube.com': 'YouTube',
  }),
);

/**
 * Search engines with a domain per country: google.de, google.co.uk, google.com.au, yahoo.co.jp,
 * yandex.ru, yandex.com.tr (and their subdomains, as with the table). Tried after the table, so a
 * table entry under one of them (gemini.google.com) wins.
 */
const COUNTRY_DOMAINS: readonly [RegExp, string][] = [
  [/^google\.(?:com?\.)?[a-z]{2}$|^google\.(?:com|cat)$/, 'Google'],
  [/^yahoo\.(?:com?\.)?[a-z]{2}$/, 'Yahoo!'],
  [/^yandex\.(?:com?\.)?[a-z]{2}$/, 'Yandex'],
];

const NONE: ReferrerFacts = Object.freeze({ host: null, source: DIRECT });

/** referrer: the raw referrer URL (or null/empty); pageHostname: the tracked page's host, lower-case. */
export function classifyReferrer(referrer: string | null | undefined, pageHostname: string): ReferrerFacts {
  const host = referringHost(referrer);
  if (host === null) return { ...NONE };
  if (host === withoutWww(hostname(pageHostname))) return { ...NONE };
  return { host, source: sourceName(host) };
}

/** The host of an http(s) URL, lower case, without a trailing dot nor a leading `www.`. */
function referringHost(referrer: string | null | undefined): string | null {
  if (typeof referrer !== 'string') return null;
  const text = referrer.trim();
  if (text === '') return null;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  const host = withoutWww(url.hostname.replace(/\.$/, ''));
  return host === '' ? null : host;
}

/** The page's host in the referrer's form: lower case, punycode, no port, no trailing dot. */
function hostname(value: string): string {
  const host = typeof value === 'string' ? value.trim().toLowerCase() : '';
  let parsed = host;
  try {
    parsed = new URL(`http://${host}`).hostname;
  } catch {
    // Compared as given: it then matches no referrer URL's host.
  }
  return parsed.replace(/\.$/, '');
}

function withoutWww(host: string): string {
  return host.startsWith('www.') ? host.slice(4) : host;
}

/** The name for a host: the longest table entry it is under, else a country-domain pattern, else the host. */
function sourceName(host: string): string {
  // An address ([::1], 192.0.2.1) is under no domain.
  if (host.startsWith('[') || /^[\d.]+$/.test(host)) return host;
  const labels = host.split('.');
  for (let start = 0; start < labels.length; start++) {
    const name = SOURCES.get(labels.slice(start).join('.'));
    if (name !== undefined) return name;
  }
  for (let start = 0; start < labels.length; start++) {
    const suffix = labels.slice(start).join('.');
    for (const [pattern, name] of COUNTRY_DOMAINS) if (pattern.test(suffix)) return name;
  }
  return host;
}
