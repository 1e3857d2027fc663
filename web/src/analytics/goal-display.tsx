// How goals look on the analytics page: the display name, colour and description an owner gave a
// goal (GET /admin/websites/{id}/goals/customizations), read once per page and handed down through
// a context. Without a customization, or when the read fails, a goal shows under its raw name.
import { type ComponentChildren, createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { request } from '../api.ts';
import './goal-display.css';
import { useFetch } from './use-fetch.ts';

export interface GoalLook {
  goalName: string;
  displayName: string | null;
  color: string | null;
  description: string | null;
}

interface PaletteColor {
  color: string;
  family: string;
  label: string;
}

export interface Goals {
  /** The customization of `goalName`, or null. */
  look: (goalName: string) => GoalLook | null;
  /** The display name, else the raw name. */
  label: (goalName: string) => string;
  /** The palette the colours come from (families of the KPI colour schemes). */
  palette: PaletteColor[];
}

const build = (looks: GoalLook[], palette: PaletteColor[]): Goals => {
  const byName = new Map(looks.map((look) => [look.goalName, look]));
  return {
    look: (goalName) => byName.get(goalName) ?? null,
    label: (goalName) => byName.get(goalName)?.displayName || goalName,
    palette,
  };
};

const NONE = build([], []);
const GoalsContext = createContext<Goals>(NONE);

/** The website's goal customizations, read once for the page; none while loading or on failure. */
export function useGoalCustomizations(websiteId: string): Goals {
  const read = useFetch(async () => {
    const answer = await request<GoalLook>('GET', `/api/v1/admin/websites/${encodeURIComponent(websiteId)}/goals/customizations`);
    return build(answer.data, Array.isArray(answer.colors) ? (answer.colors as PaletteColor[]) : []);
  }, websiteId);
  return read.data ?? NONE;
}

export function GoalsProvider(props: { goals: Goals; children: ComponentChildren }) {
  return <GoalsContext.Provider value={props.goals}>{props.children}</GoalsContext.Provider>;
}

export const useGoals = (): Goals => useContext(GoalsContext);

/** The secondary text of a customized goal: its raw name when renamed, and its description. */
export function goalSubtext(look: GoalLook | null): string | null {
  if (!look) return null;
  const parts = [look.displayName && look.displayName !== look.goalName ? look.goalName : null, look.description].filter(Boolean);
  return parts.length ? parts.join(' · ') : null;
}

/** A tooltip naming the goal as sent by clients, with its description. */
export function goalTitle(goalName: string, look: GoalLook | null): string {
  const named = look?.displayName && look.displayName !== goalName ? `${look.displayName} (goal ${goalName})` : goalName;
  return look?.description ? `${named}: ${look.description}` : named;
}

/** The goal's colour as a small square beside its name (decorative: the name says which goal). */
export function Swatch({ color }: { color: string | null | undefined }) {
  return color ? <span class="an-swatch" style={{ backgroundColor: color }} aria-hidden="true" /> : null;
}

function luminance(hex: string): number {
  const channel = (index: number) => {
    const value = parseInt(hex.slice(index, index + 2), 16) / 255;
    return value <= 0.03928 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

/** Contrast ratio of two #rrggbb colours. */
export function contrast(a: string, b: string): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

/** Contrast ratio of a #rrggbb colour against white. */
export function contrastOnWhite(hex: string): number {
  return contrast(hex, '#ffffff');
}

const HEX = /^#[0-9a-f]{6}$/i;

/**
 * A goal colour fit to draw a line on `background` (white, or the dark theme's card; 3:1, WCAG's
 * contrast for graphics): the colour itself, else the shade of its palette family that stands out
 * most (the dark one on white, the light one on dark), else null.
 */
export function lineColor(goals: Goals, color: string | null, background = '#ffffff'): string | null {
  if (!color || !HEX.test(color)) return null;
  const bg = HEX.test(background) ? background : '#ffffff';
  if (contrast(color, bg) >= 3) return color;
  const family = goals.palette.find((entry) => entry.color === color.toLowerCase())?.family;
  const best = goals.palette
    .filter((entry) => entry.family === family && HEX.test(entry.color))
    .sort((a, b) => contrast(b.color, bg) - contrast(a.color, bg))[0];
  return best && contrast(best.color, bg) >= 3 ? best.color : null;
}
