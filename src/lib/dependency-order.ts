/**
 * `items` ordered so that each comes after every item `needs` names for it, keeping the given
 * order where it is free; throws naming `what` when they need each other in a circle.
 */
export function dependencyOrder<T>(items: readonly T[], needs: (item: T) => Iterable<T>, what: string): T[] {
  const ordered: T[] = [];
  while (ordered.length < items.length) {
    const next = items.find((item) => !ordered.includes(item) && [...needs(item)].every((other) => ordered.includes(other)));
    if (!next) throw new Error(`${what} depend on each other in a circle`);
    ordered.push(next);
  }
  return ordered;
}
