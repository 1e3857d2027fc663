import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';
import { SubmitButton } from './Buttons.tsx';
import { ErrorMessage } from './ErrorMessage.tsx';
import { useSubmit } from './useSubmit.ts';

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

export interface FormDialogProps {
  open?: boolean;
  title: string;
  onClose: () => void;
  onSubmit: (event: Event) => void;
  /** The submit state (useSubmit): the button waits, the error shows above the buttons. */
  busy: boolean;
  error: unknown;
  submitLabel: string;
  busyLabel?: string;
  /** A destructive action: the submit button in the danger colour. */
  danger?: boolean;
  /** The submit button disabled besides while busy (what is typed does not allow it yet). */
  disabled?: boolean;
  /** The form's class ("stack" for fields one above the other). */
  class?: string;
  children?: ComponentChildren;
}

/** A form in a Dialog: its fields, the error, then Cancel and the submit button. */
export function FormDialog({
  open = true,
  title,
  onClose,
  onSubmit,
  busy,
  error,
  submitLabel,
  busyLabel = 'Saving…',
  danger,
  disabled,
  class: className,
  children,
}: FormDialogProps): JSX.Element {
  return (
    <Dialog open={open} title={title} onClose={onClose}>
      <form onSubmit={onSubmit} class={className}>
        {children}
        <ErrorMessage error={error} />
        <div class="dialog-actions">
          <button type="button" class="button" onClick={onClose}>
            Cancel
          </button>
          <SubmitButton busy={busy} busyLabel={busyLabel} label={submitLabel} class={danger ? 'button danger' : 'button primary'} disabled={disabled} />
        </div>
      </form>
    </Dialog>
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
  const { busy, error, setError, onSubmit } = useSubmit();
  useEffect(() => {
    if (open) setError(null);
  }, [open]);
  const confirm = onSubmit(async () => {
    await onConfirm();
    onClose();
  });
  return (
    <FormDialog
      open={open}
      title={title}
      onClose={onClose}
      onSubmit={confirm}
      busy={busy}
      error={error}
      submitLabel={confirmLabel}
      busyLabel="Working…"
      danger={danger}
    >
      <div class="dialog-body">{message}</div>
    </FormDialog>
  );
}
