// Bound parameters have per-statement limits on both engines, so long lists go in slices.

/** The items in slices of at most `size`. */
export function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Runs `fn` over slices of at most `size` items, one after the other. */
export async function inChunks<T>(items: T[], size: number, fn: (chunk: T[]) => Promise<void>): Promise<void> {
  for (const chunk of chunks(items, size)) await fn(chunk);
}
