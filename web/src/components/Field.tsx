import type { ComponentChildren, JSX } from 'preact';
import { useId } from 'preact/hooks';
import { ApiError } from '../api.ts';

/**
 * A field's message from the API ("is not the current password", said of the field) as a sentence
 * to show at the field: "This is not the current password."
 */
export function fieldSentence(message: string): string {
  const text = message.trim();
  if (!text) return text;
  const sentence = /^(is|are|must|may|has|have|was|were|should|cannot|can|does|do)\b/.test(text) ? `This ${text}` : text[0]!.toUpperCase() + text.slice(1);
  return /[.!?]$/.test(sentence) ? sentence : `${sentence}.`;
}

/** The 400 field messages of an ApiError, as sentences, keyed by field (`body.` left out: `steps[0].url`). */
export function fieldErrors(error: unknown): Record<string, string> {
  const errors: Record<string, string> = {};
  if (!(error instanceof ApiError) || error.status !== 400) return errors;
  for (const detail of error.details) {
    const field = detail.path.replace(/^body\.?/, '');
    if (field && !errors[field]) errors[field] = fieldSentence(detail.message);
  }
  return errors;
}

interface FieldFrameProps {
  id: string;
  label: ComponentChildren;
  hint?: ComponentChildren;
  error?: string | null;
  children: ComponentChildren;
  class?: string;
}

/** A field's hint and error, below it; their ids are the ones aria-describedby names. */
function FieldNotes({ id, hint, error }: { id: string; hint?: ComponentChildren; error?: string | null }): JSX.Element {
  return (
    <>
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {error && (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </>
  );
}

function FieldFrame({ id, label, hint, error, children, class: className }: FieldFrameProps): JSX.Element {
  return (
    <div class={`field${error ? ' has-error' : ''}${className ? ` ${className}` : ''}`}>
      <label for={id}>{label}</label>
      {children}
      <FieldNotes id={id} hint={hint} error={error} />
    </div>
  );
}

function describedBy(id: string, hint: unknown, error: unknown): string | undefined {
  const ids = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean);
  return ids.length ? ids.join(' ') : undefined;
}

/** A control's id, and its state and notes for assistive technology. */
function controlProps(id: string, hint: unknown, error: unknown) {
  return { id, 'aria-invalid': error ? true : undefined, 'aria-describedby': describedBy(id, hint, error) };
}

/** What every labelled field takes besides its control's own attributes. */
interface FieldProps {
  label: ComponentChildren;
  value: string;
  onValue: (value: string) => void;
  hint?: ComponentChildren;
  error?: string | null;
  /** A class for the wrapping `.field` div. */
  fieldClass?: string;
}

type InputAttributes = Omit<JSX.InputHTMLAttributes<HTMLInputElement>, 'value' | 'onInput' | 'label'>;

export interface TextFieldProps extends InputAttributes, FieldProps {}

/** A labelled `<input>` with an optional hint and error (tied to it with aria-describedby). */
export function TextField({ label, value, onValue, hint, error, fieldClass, id: givenId, ...input }: TextFieldProps): JSX.Element {
  const generated = useId();
  const id = (givenId as string | undefined) ?? generated;
  return (
    <FieldFrame id={id} label={label} hint={hint} error={error} class={fieldClass}>
      <input type="text" {...input} value={value} onInput={(event) => onValue(event.currentTarget.value)} {...controlProps(id, hint, error)} />
    </FieldFrame>
  );
}

type TextAreaAttributes = Omit<JSX.TextareaHTMLAttributes<HTMLTextAreaElement>, 'value' | 'onInput' | 'label'>;

export interface TextAreaFieldProps extends TextAreaAttributes, FieldProps {}

export function TextAreaField({ label, value, onValue, hint, error, fieldClass, ...area }: TextAreaFieldProps): JSX.Element {
  const id = useId();
  return (
    <FieldFrame id={id} label={label} hint={hint} error={error} class={fieldClass}>
      <textarea rows={4} {...area} value={value} onInput={(event) => onValue(event.currentTarget.value)} {...controlProps(id, hint, error)} />
    </FieldFrame>
  );
}

type SelectAttributes = Omit<JSX.SelectHTMLAttributes<HTMLSelectElement>, 'value' | 'onInput' | 'onChange' | 'label'>;

export interface SelectFieldProps extends SelectAttributes, FieldProps {
  /** `[value, label]` pairs, or plain values shown as they are. */
  options: Array<string | readonly [string, string]>;
}

export function SelectField({ label, value, onValue, options, hint, error, fieldClass, ...select }: SelectFieldProps): JSX.Element {
  const id = useId();
  return (
    <FieldFrame id={id} label={label} hint={hint} error={error} class={fieldClass}>
      <select {...select} value={value} onChange={(event) => onValue(event.currentTarget.value)} {...controlProps(id, hint, error)}>
        {options.map((option) => {
          const [optionValue, optionLabel] = typeof option === 'string' ? [option, option] : option;
          return (
            <option key={optionValue} value={optionValue}>
              {optionLabel}
            </option>
          );
        })}
      </select>
    </FieldFrame>
  );
}

export interface CheckboxFieldProps extends Omit<JSX.InputHTMLAttributes<HTMLInputElement>, 'checked' | 'onChange' | 'label'> {
  label: ComponentChildren;
  checked: boolean;
  onChecked: (checked: boolean) => void;
  hint?: ComponentChildren;
  error?: string | null;
}

/** A checkbox with its label beside it. */
export function CheckboxField({ label, checked, onChecked, hint, error, ...input }: CheckboxFieldProps): JSX.Element {
  const id = useId();
  return (
    <div class={`field checkbox${error ? ' has-error' : ''}`}>
      <input
        {...input}
        type="checkbox"
        id={id}
        checked={checked}
        onChange={(event) => onChecked(event.currentTarget.checked)}
        aria-describedby={describedBy(id, hint, error)}
      />
      <label for={id}>{label}</label>
      <FieldNotes id={id} hint={hint} error={error} />
    </div>
  );
}
