/**
 * Whole-string wildcard matching where `*` stands for any run of characters (slashes included).
 * Greedy two-pointer matching with backtracking to the last star only: linear in practice and
 * O(text × pattern) at worst, never exponential, whatever a settings writer puts in a pattern.
 * (A regular expression built from `*`s can take seconds on a long path: catastrophic backtracking.)
 */
export function matchesGlob(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let starP = -1;
  let starT = 0;
  while (t < text.length) {
    if (p < pattern.length && pattern[p] !== '*' && pattern[p] === text[t]) {
      p++;
      t++;
    } else if (p < pattern.length && pattern[p] === '*') {
      starP = p++;
      starT = t;
    } else if (starP !== -1) {
      p = starP + 1;
      t = ++starT;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}
