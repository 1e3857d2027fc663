import type { JSX } from 'preact';

/** A small spinning ring with a text for screen readers (visible too, unless `hideLabel`). */
export function Spinner({ label = 'Loading…', hideLabel = false }: { label?: string; hideLabel?: boolean }): JSX.Element {
  return (
    <span class="spinner-wrap" role="status">
      <span class="spinner" aria-hidden="true" />
      <span class={hideLabel ? 'visually-hidden' : 'spinner-label'}>{label}</span>
    </span>
  );
}

/** A block-level loading placeholder for a page or a card. */
export function Loading({ label = 'Loading…' }: { label?: string }): JSX.Element {
  return (
    <div class="loading">
      <Spinner label={label} />
    </div>
  );
}
