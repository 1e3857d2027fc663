import { KPI_COLOR_SCHEMES } from '../websites/websites.schemas.ts';

// The colors a goal may be given: three shades (light, base, dark) of every family of the
// website's kpiColorScheme list, plus the hosted service's documented goal colors that are not
// among them (website-api.md section 4: #8dcdff, #84cc16, #f97316, #eab308, #ec4899, #ef4444,
// #a855f7, #14b8a6; the last six are base shades already). The tracked-goals list reuses it;
// typing it by family makes a family added to the scheme list fail to compile here until it has
// its shades.

export type ColorFamily = (typeof KPI_COLOR_SCHEMES)[number];

export interface PaletteColor {
  /** Lower-case #rrggbb. */
  color: string;
  family: ColorFamily;
  label: string;
}

const SHADES: Record<ColorFamily, readonly [light: string, base: string, dark: string]> = {
  red: ['#fca5a5', '#ef4444', '#b91c1c'],
  orange: ['#fdba74', '#f97316', '#c2410c'],
  yellow: ['#fde047', '#eab308', '#a16207'],
  green: ['#86efac', '#22c55e', '#15803d'],
  purple: ['#d8b4fe', '#a855f7', '#7e22ce'],
  pink: ['#f9a8d4', '#ec4899', '#be185d'],
  gray: ['#d1d5db', '#6b7280', '#374151'],
  blue: ['#93c5fd', '#3b82f6', '#1d4ed8'],
  teal: ['#5eead4', '#14b8a6', '#0f766e'],
  indigo: ['#a5b4fc', '#6366f1', '#4338ca'],
};

/** Colors of the hosted service's palette beyond the shades, placed after their family's shades. */
const HOSTED_EXTRAS: Partial<Record<ColorFamily, readonly { color: string; label: string }[]>> = {
  green: [{ color: '#84cc16', label: 'Lime' }],
  blue: [{ color: '#8dcdff', label: 'Sky' }],
};

const capitalised = (family: string) => family[0]!.toUpperCase() + family.slice(1);

export const GOAL_PALETTE: readonly PaletteColor[] = Object.freeze(
  KPI_COLOR_SCHEMES.flatMap((family) => {
    const [light, base, dark] = SHADES[family];
    const name = capitalised(family);
    return [
      { color: light, family, label: `${name} (light)` },
      { color: base, family, label: name },
      { color: dark, family, label: `${name} (dark)` },
      ...(HOSTED_EXTRAS[family] ?? []).map((extra) => ({ ...extra, family })),
    ];
  }),
);

const PALETTE_COLORS = new Set(GOAL_PALETTE.map((entry) => entry.color));

/** The palette value for `color` (case-insensitive), or null when it is not a palette color. */
export function paletteColor(color: string): string | null {
  const lower = color.toLowerCase();
  return PALETTE_COLORS.has(lower) ? lower : null;
}
