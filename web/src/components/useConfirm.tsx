import type { ComponentChildren, JSX } from 'preact';
import { useState } from 'preact/hooks';
import { ConfirmDialog } from './Dialog.tsx';

/** What to ask before acting on an item, and the action. */
export interface Confirmation {
  title: string;
  message: ComponentChildren;
  confirmLabel: string;
  /** Runs the action; a rejection is shown in the dialog, which stays open. */
  onConfirm: () => Promise<unknown> | unknown;
}

export interface Confirm<T> {
  /** Opens the dialog for `item`. */
  ask: (item: T) => void;
  /** The ConfirmDialog (closed until `ask`): to be placed in the page. */
  dialog: JSX.Element;
}

/**
 * A destructive action on one item of a list (revoke, remove, delete), confirmed first: a row's
 * button calls `ask(item)`, and `confirmation(item)` says what the dialog asks and does.
 */
export function useConfirm<T>(confirmation: (item: T) => Confirmation): Confirm<T> {
  const [item, setItem] = useState<T | null>(null);
  const content = item === null ? null : confirmation(item);
  const dialog = (
    <ConfirmDialog
      open={content !== null}
      title={content?.title ?? ''}
      message={content?.message}
      confirmLabel={content?.confirmLabel ?? ''}
      danger
      onConfirm={() => content?.onConfirm()}
      onClose={() => setItem(null)}
    />
  );
  return { ask: setItem, dialog };
}
