import { invalidField } from '../../errors.ts';
import { newId } from '../../lib/ids.ts';
import type { FunnelStepView, StepInputValue } from './funnels.schemas.ts';

// The rules a JSON Schema cannot express: which fields each step type needs, what a step URL is,
// which step ids may be kept, and how a name becomes a slug.

export const URL_RULE = 'must be a path starting with / or an absolute http(s) URL';

// A path: one leading "/" (not "//", which browsers read as another host), no white space or
// control characters.
const PATH = /^\/(?!\/)[^\s\x00-\x1f\x7f]*$/; // eslint-disable-line no-control-regex
const NO_SPACE = /^[^\s\x00-\x1f\x7f]+$/; // eslint-disable-line no-control-regex

export function isStepUrl(value: string): boolean {
  if (PATH.test(value)) return true;
  if (!NO_SPACE.test(value) || !/^https?:\/\//i.test(value)) return false;
  try {
    return new URL(value).hostname !== '';
  } catch {
    return false;
  }
}

/**
 * Turns the steps of a request into stored steps. A step that sends the id of one of
 * `existingIds` keeps it; every other step gets a new id.
 */
export function buildSteps(input: StepInputValue[], existingIds: ReadonlySet<string>): FunnelStepView[] {
  const kept = new Set<string>();
  return input.map((step, index) => {
    const at = `body.steps[${index}]`;
    if (step.id !== undefined) {
      if (!existingIds.has(step.id)) {
        throw invalidField(`${at}.id`, 'is not the id of a step of this funnel; leave it out for a new step');
      }
      if (kept.has(step.id)) throw invalidField(`${at}.id`, 'is already used by an earlier step');
      kept.add(step.id);
    }
    const id = step.id ?? newId();
    if (step.type === 'pageview') {
      if (step.goalName !== undefined) throw invalidField(`${at}.goalName`, 'is not allowed on a pageview step (use url)');
      if (step.url === undefined) throw invalidField(`${at}.url`, 'is required for a pageview step');
      if (!isStepUrl(step.url)) throw invalidField(`${at}.url`, URL_RULE);
      return { id, name: step.name ?? step.url, type: 'pageview', url: step.url };
    }
    if (step.url !== undefined) throw invalidField(`${at}.url`, 'is not allowed on a goal step (use goalName)');
    if (step.goalName === undefined) throw invalidField(`${at}.goalName`, 'is required for a goal step');
    return { id, name: step.name ?? step.goalName, type: 'goal', goalName: step.goalName };
  });
}

export function slugify(name: string): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  // A name without a single latin letter or digit still needs a usable slug.
  return slug === '' ? 'funnel' : slug;
}

/**
 * The slug for `name` that no slug in `taken` uses: the bare slug, else with -2, -3, ...
 * `current` (the funnel's slug so far) is kept when it still fits the name and is free, so a
 * case-only rename or a revival does not move the funnel's slug.
 */
export function uniqueSlug(name: string, taken: ReadonlySet<string>, current?: string): string {
  const base = slugify(name);
  if (current !== undefined && !taken.has(current)) {
    const suffix = current.startsWith(`${base}-`) ? current.slice(base.length + 1) : null;
    if (current === base || (suffix !== null && /^[1-9]\d*$/.test(suffix) && Number(suffix) >= 2)) return current;
  }
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base}-${n}`;
    if (!taken.has(candidate)) return candidate;
  }
}
