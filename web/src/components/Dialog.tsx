import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { ErrorMessage } from './ErrorMessage.tsx';

export interface DialogProps {
  open: boolean;
  title: string;
  onClose: () => void;
  children?: ComponentChildren;
}

/**
 * A modal over the native `<dialog>`: the browser traps focus, Escape closes it, and focus goes
 * back to what opened it.
 */
export function Dialog({ open, title, onClose, children }: DialogProps): JSX.Element {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog || !open) return undefined;
    // Focus goes back to what opened the dialog, however it ends (closed, or removed with its parent).
    const opener = document.activeElement as HTMLElement | null;
    if (!dialog.open) dialog.showModal();
    return () => {
      if (dialog.open) dialog.close();
      if (opener?.isConnected) opener.focus();
    };
  }, [open]);
  return (
    <dialog
      ref={ref}
      class="dialog"
      aria-labelledby={titleId}
      onClose={() => open && onClose()}
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
    >
      {open && (
        <>
          <h2 id={titleId} class="dialog-title">
            {title}
          </h2>
          {children}
        </>
      )}
    </dialog>
  );
}

export interface ConfirmProps {
  open: boolean;
  title: string;
  message: ComponentChildren;
  confirmLabel: string;
  danger?: boolean;
  /** Runs the action; a rejection is shown in the dialog, which stays open. */
  onConfirm: () => Promise<unknown> | unknown;
  onClose: () => void;
}

/** "Are you sure?" with a Cancel and a confirm button; the confirm button waits for the action. */
export function ConfirmDialog({ open, title, message, confirmLabel, danger, onConfirm, onClose }: ConfirmProps): JSX.Element {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    if (open) setError(null);
  }, [open]);
  async function confirm(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
      onClose();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  }
  return (
    <Dialog open={open} title={title} onClose={onClose}>
      <form onSubmit={confirm}>
        <div class="dialog-body">{message}</div>
        <ErrorMessage error={error} />
        <div class="dialog-actions">
          <button type="button" class="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class={danger ? 'button danger' : 'button primary'} disabled={busy}>
            {busy ? 'Working…' : confirmLabel}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
