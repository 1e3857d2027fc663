import type { ComponentChildren, JSX } from 'preact';

/**
 * A table that scrolls sideways on a narrow screen. The region is focusable, so the keyboard can
 * scroll it too, and named, so a screen reader says what it holds.
 */
export function TableWrap({ label, children }: { label: string; children: ComponentChildren }): JSX.Element {
  return (
    <div class="table-wrap" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}
