import type { ComponentChildren, JSX } from 'preact';

export interface SubmitButtonProps {
  busy: boolean;
  /** What the button says while busy ("Saving…"). */
  busyLabel: string;
  label: ComponentChildren;
  class?: string;
  /** Disabled besides while busy. */
  disabled?: boolean;
}

/** A form's submit button: disabled while its request runs, and saying so. */
export function SubmitButton({ busy, busyLabel, label, class: className = 'button primary', disabled }: SubmitButtonProps): JSX.Element {
  return (
    <button type="submit" class={className} disabled={busy || disabled}>
      {busy ? busyLabel : label}
    </button>
  );
}

export interface ActionButtonProps {
  label: ComponentChildren;
  /** What it acts on, said to screen readers after the label ("Delete" + " Reporting script"). */
  about: ComponentChildren;
  onClick: () => void;
  /** A destructive action, in the danger colour. */
  danger?: boolean;
  disabled?: boolean;
}

/** A small button of a row (a table's or a list's), named with the item it acts on. */
export function ActionButton({ label, about, onClick, danger, disabled }: ActionButtonProps): JSX.Element {
  return (
    <button type="button" class={danger ? 'button small danger-text' : 'button small'} disabled={disabled} onClick={onClick}>
      {label}
      <span class="visually-hidden"> {about}</span>
    </button>
  );
}
