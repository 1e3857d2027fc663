import { LRUCache } from 'lru-cache';

/**
 * A pure function of one string, remembered for the most recently seen inputs. Ingestion parses
 * the same few user agents and referrers again and again; long inputs are computed every time,
 * so the memory a cache holds stays small whatever a client sends.
 */
export function memoByString<T extends NonNullable<unknown>>(compute: (input: string) => T, options: { max: number; maxInputLength: number }): (input: string) => T {
  const kept = new LRUCache<string, T>({ max: options.max });
  return (input) => {
    const cached = kept.get(input);
    if (cached !== undefined) return cached;
    const value = compute(input);
    if (input.length <= options.maxInputLength) kept.set(input, value);
    return value;
  };
}
