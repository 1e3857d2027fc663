// Tables that fit the terminal: times shortened to the minute, and the widest cells cut with "…"
// until every line fits. Identifiers are cut last, because they are what people copy from a table.
// Widths count code points: a wide (CJK, emoji) character can still push a line one column over.
// Written to a pipe or a file, a table is tab-separated whole values instead (tableStyle).

const GAP = '  ';
const ELLIPSIS = '…';
/** Below this a cut cell says too little to be worth keeping wider than its header. */
const MIN_CUT_WIDTH = 6;
const DEFAULT_WIDTH = 80;

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

export function isInstant(value: string): boolean {
  return ISO_INSTANT.test(value) && !Number.isNaN(Date.parse(value));
}

const pad2 = (n: number) => String(n).padStart(2, '0');

/** `2026-11-23 17:22` in the terminal's time zone (TZ), the way `ls -l` and `git log` show times. */
export function shortTime(iso: string): string {
  const at = new Date(iso);
  return `${at.getFullYear()}-${pad2(at.getMonth() + 1)}-${pad2(at.getDate())} ${pad2(at.getHours())}:${pad2(at.getMinutes())}`;
}

/**
 * How tables are printed. On a terminal they are fitted to its width; into a pipe or a file they
 * are tab-separated lines of whole values without a header, as `gh` prints them, so `| grep` and
 * `| cut -f2` see every character. SIGHTLINE_FORCE_TTY (as gh's GH_FORCE_TTY) asks for the
 * terminal's tables anyway; a number there is the width.
 */
export type TableStyle = { kind: 'terminal'; width: number } | { kind: 'tsv' };

export function tableStyle(env: NodeJS.ProcessEnv = process.env, stdout: { isTTY?: boolean; columns?: number } = process.stdout): TableStyle {
  const forced = env.SIGHTLINE_FORCE_TTY;
  if (!stdout.isTTY && !forced) return { kind: 'tsv' };
  const forcedWidth = Number(forced);
  if (forced && Number.isInteger(forcedWidth) && forcedWidth > 0) return { kind: 'terminal', width: forcedWidth };
  if (stdout.isTTY && stdout.columns && stdout.columns > 0) return { kind: 'terminal', width: stdout.columns };
  const columns = Number(env.COLUMNS);
  return { kind: 'terminal', width: Number.isInteger(columns) && columns > 0 ? columns : DEFAULT_WIDTH };
}

/** Length in code points, so a character outside the BMP counts once. */
const length = (text: string) => Array.from(text).length;

function cut(text: string, width: number): string {
  const chars = Array.from(text);
  if (chars.length <= width) return text;
  return width <= 1 ? ELLIPSIS.slice(0, width) : `${chars.slice(0, width - 1).join('')}${ELLIPSIS}`;
}

const SHORT_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/;

/**
 * How late a column gives up space: identifiers last (people copy them from tables), times
 * before them (a cut time says nothing), everything else first.
 */
function keepPriority(header: string, cells: string[]): number {
  if (/(^| )ID$/.test(header)) return 2;
  if (cells.some((value) => SHORT_TIME.test(value)) && cells.every((value) => SHORT_TIME.test(value) || value === '-' || value === 'never')) return 1;
  return 0;
}

/**
 * The largest common cap on the shrinkable columns' widths that fits `budget`, or null when even
 * the smallest allowed widths do not fit. Wider columns give up space first (water-filling).
 */
function capFor(widths: number[], shrinkable: boolean[], floors: number[], budget: number): number | null {
  const total = (cap: number) => widths.reduce((sum, w, i) => sum + (shrinkable[i] ? Math.min(w, Math.max(cap, floors[i]!)) : w), 0);
  if (total(0) > budget) return null;
  let cap = Math.max(...widths);
  while (cap > 0 && total(cap) > budget) cap--;
  return cap;
}

/** Column widths that fit `width` characters, cutting the columns that matter least first. */
function fitWidths(priorities: number[], natural: number[], width: number): number[] {
  const budget = width - GAP.length * (natural.length - 1);
  if (natural.reduce((a, b) => a + b, 0) <= budget) return natural;
  const floors = natural.map((w) => Math.min(w, MIN_CUT_WIDTH));
  for (const spared of [1, 2, Infinity]) {
    const shrinkable = priorities.map((priority) => priority < spared);
    const cap = capFor(natural, shrinkable, floors, budget);
    if (cap !== null) return natural.map((w, i) => (shrinkable[i] ? Math.min(w, Math.max(cap, floors[i]!)) : w));
  }
  return floors;
}

/** The lines of a table: headers and rows, padded to their columns and fitted to `width`. */
export function layoutTable(headers: string[], rows: string[][], width: number): string[] {
  const natural = headers.map((header, i) => Math.max(length(header), ...rows.map((row) => length(row[i]!))));
  const priorities = headers.map((header, i) => keepPriority(header, rows.map((row) => row[i]!)));
  const widths = fitWidths(priorities, natural, width);
  const last = headers.length - 1;
  return [headers, ...rows].map((line) => {
    const text = line
      .map((value, i) => {
        const fitted = cut(value, widths[i]!);
        return i === last ? fitted : fitted + ' '.repeat(widths[i]! - length(fitted));
      })
      .join(GAP)
      .trimEnd();
    // When even the narrowest columns do not fit (a very narrow terminal), the line itself is cut.
    return cut(text, width);
  });
}

/** The lines of a table for a program: one row a line, cells whole and tab-separated, no header. */
export function tsvLines(rows: string[][]): string[] {
  return rows.map((row) => row.join('\t'));
}
