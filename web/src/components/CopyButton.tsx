import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/** Copies the text of `field`, selected (the browser's older copy command); leaves it selected. */
function copySelected(field: HTMLInputElement | HTMLTextAreaElement): boolean {
  field.select();
  try {
    return document.execCommand('copy');
  } catch {
    return false;
  }
}

async function copy(text: string, fieldId?: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // Without the async clipboard (an http:// origin that is not localhost): the field's own text,
    // selected (and left selected, to copy by hand if even this fails), or a hidden text area.
    const field = fieldId ? document.getElementById(fieldId) : null;
    if (field instanceof HTMLInputElement || field instanceof HTMLTextAreaElement) {
      field.focus(); // a visible field: the selection shows, ready to copy by hand
      return copySelected(field);
    }
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.className = 'visually-hidden';
    document.body.append(area);
    const done = copySelected(area);
    area.remove();
    return done;
  }
}

export interface CopyButtonProps {
  text: string;
  label?: string;
  /** What is copied, said to screen readers after the label ("Copy" + " the webhook URL"). */
  about?: string;
  /** The id of a field showing `text`: where the clipboard is unavailable, its text is selected. */
  fieldId?: string;
}

/** A button that copies `text` to the clipboard and says so for two seconds. */
export function CopyButton({ text, label = 'Copy', about, fieldId }: CopyButtonProps): JSX.Element {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  useEffect(() => {
    if (state === 'idle') return undefined;
    const timer = setTimeout(() => setState('idle'), 2000);
    return () => clearTimeout(timer);
  }, [state]);
  return (
    <>
      <button type="button" class="button small" onClick={async () => setState((await copy(text, fieldId)) ? 'copied' : 'failed')}>
        {state === 'copied' ? 'Copied' : label}
        {about && <span class="visually-hidden"> {about}</span>}
      </button>
      <span class="visually-hidden" role="status">
        {state === 'copied' ? 'Copied to the clipboard' : state === 'failed' ? (fieldId ? 'Could not copy: the text is selected, copy it from there' : 'Could not copy: select the text and copy it') : ''}
      </span>
    </>
  );
}

/** A read-only secret or snippet in a monospace box, with a copy button. */
export function CopyBox({ text, label, copyLabel = 'Copy' }: { text: string; label: string; copyLabel?: string }): JSX.Element {
  return (
    <div class="copy-box" role="group" aria-label={label}>
      <code>{text}</code>
      <CopyButton text={text} label={copyLabel} />
    </div>
  );
}
