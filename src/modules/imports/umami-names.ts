import { DIRECT, classifyReferrer } from '../events/ingest.referrer.ts';

/** Plausible's name of no referrer, which the imported sources' reads take as the direct row. */
export const IMPORTED_DIRECT = 'Direct / None';

// Umami's names for browsers, operating systems and devices (its tracker's user-agent parser,
// detect-browser) in the names Sightline's own events carry (Bowser's), so an imported row and a
// native row of the same browser fall under one key. A name not listed is kept as Umami wrote it.

const BROWSERS: Record<string, string> = {
  android: 'Android Browser',
  aol: 'AOL Explorer',
  bb10: 'BlackBerry',
  beaker: 'Beaker',
  brave: 'Brave',
  chrome: 'Chrome',
  'chromium-webview': 'Chrome',
  crios: 'Chrome',
  edge: 'Microsoft Edge',
  'edge-chromium': 'Microsoft Edge',
  'edge-ios': 'Microsoft Edge',
  facebook: 'Facebook',
  firefox: 'Firefox',
  fxios: 'Firefox',
  ie: 'Internet Explorer',
  instagram: 'Instagram',
  ios: 'Safari',
  'ios-webview': 'Safari',
  kakaotalk: 'KakaoTalk',
  miui: 'MIUI',
  opera: 'Opera',
  'opera-mini': 'Opera Mini',
  phantomjs: 'PhantomJS',
  safari: 'Safari',
  samsung: 'Samsung Internet for Android',
  silk: 'Amazon Silk',
  vivaldi: 'Vivaldi',
  yandexbrowser: 'Yandex Browser',
};

/** Umami's operating systems by prefix: 'Windows 10' is Windows, version 10. */
const SYSTEMS: [RegExp, string][] = [
  [/^windows\b/i, 'Windows'],
  [/^mac os\b|^macos\b|^os x\b/i, 'macOS'],
  [/^ios\b/i, 'iOS'],
  [/^android\b/i, 'Android'],
  [/^chrome os\b/i, 'Chrome OS'],
  [/^linux\b/i, 'Linux'],
  [/^blackberry\b/i, 'BlackBerry'],
];

export function browserName(umami: string | null): string {
  if (!umami) return '';
  return BROWSERS[umami.toLowerCase()] ?? umami;
}

/** The operating system and the version Umami put in its name ('Windows 10' -> Windows, 10). */
export function systemName(umami: string | null): { name: string; version: string } {
  if (!umami) return { name: '', version: '' };
  for (const [pattern, name] of SYSTEMS) {
    const match = pattern.exec(umami);
    if (match) return { name, version: /^windows\b/i.test(umami) || /^mac os\b/i.test(umami) ? umami.slice(match[0].length).trim() : '' };
  }
  return { name: umami, version: '' };
}

/** Umami's device classes: desktop, laptop (a wide desktop screen), tablet, mobile. Sightline has no laptop. */
export function deviceName(umami: string | null): string {
  if (!umami) return '';
  const device = umami.toLowerCase();
  return device === 'laptop' ? 'desktop' : device;
}

/** Umami's region: an ISO 3166-2 code ('DE-BE'), or the subdivision alone in older rows ('BE'). */
export function regionCode(country: string | null, region: string | null): string {
  if (!region) return '';
  if (region.includes('-') || !country) return region;
  return `${country}-${region}`;
}

/**
 * A visit's source as Sightline names its own: the referring domain's well-known name (Google,
 * Reddit ...) or the domain without www; the website's own host and no referrer are Direct / None.
 */
export function sourceName(referrerDomain: string | null, pageHostname: string | null): string {
  if (!referrerDomain) return IMPORTED_DIRECT;
  const source = classifyReferrer(`https://${referrerDomain}/`, pageHostname ?? '').source;
  return source === DIRECT ? IMPORTED_DIRECT : source;
}
