/** Runs `fn` over slices of at most `size` items (bound parameters have engine limits). */
export async function inChunks<T>(items: T[], size: number, fn: (chunk: T[]) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await fn(items.slice(i, i + size));
}
