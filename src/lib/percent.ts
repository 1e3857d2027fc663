/** `part` as a percentage of `whole` with two decimals (12.5 = 12.5 %); 0 when `whole` is 0. */
export function percentOf(part: number, whole: number): number {
  return whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 100;
}
