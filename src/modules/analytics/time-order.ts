// The order the rollup deriver takes a visitor's events in when it replays them (a repair, a
// build): by instant, then by id. Sorted here, not by the database: with ORDER BY occurred_at,
// SQLite walks the website's (website, time) index over every event of the website instead of
// the few it was asked for.

/** `items` in time order; `instantOf` reads an item's instant (a timestamp string or a Date). */
export function inTimeOrder<T extends { id: string }>(items: T[], instantOf: (item: T) => string | Date): T[] {
  const instants = items.map((item) => new Date(instantOf(item)).getTime());
  const order = items.map((_, i) => i).sort((a, b) => instants[a]! - instants[b]! || (items[a]!.id < items[b]!.id ? -1 : items[a]!.id > items[b]!.id ? 1 : 0));
  return order.map((i) => items[i]!);
}
