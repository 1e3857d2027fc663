/** A page as a path pattern: a full URL names its path (its query dropped); `pricing` is `/pricing`. */
export function pathOf(value: string): string {
  if (value.startsWith('/') || value.startsWith('*')) return value.split('?')[0]!;
  try {
    return new URL(value).pathname;
  } catch {
    return `/${value.split('?')[0]!}`;
  }
}
