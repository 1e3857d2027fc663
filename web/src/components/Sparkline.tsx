import type { JSX } from 'preact';

export interface SparklineProps {
  values: number[];
  /** What the line shows, said to screen readers instead of the drawing. */
  label: string;
  width?: number;
  height?: number;
}

/** A tiny inline SVG line (no library): the shape of a series, not its numbers. */
export function Sparkline({ values, label, width = 120, height = 32 }: SparklineProps): JSX.Element {
  const max = Math.max(1, ...values);
  const step = values.length > 1 ? width / (values.length - 1) : width;
  const pad = 2;
  const points = values
    .map((value, index) => `${(index * step).toFixed(1)},${(pad + (height - 2 * pad) * (1 - value / max)).toFixed(1)}`)
    .join(' ');
  const area = values.length > 1 ? `0,${height} ${points} ${width},${height}` : '';
  return (
    <svg class="sparkline" viewBox={`0 0 ${width} ${height}`} width={width} height={height} role="img" aria-label={label} preserveAspectRatio="none">
      {area && <polygon points={area} class="sparkline-area" />}
      {values.length > 1 && <polyline points={points} class="sparkline-line" fill="none" />}
    </svg>
  );
}
