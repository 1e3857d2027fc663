import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

async function copy(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // Without the async clipboard (an http:// origin that is not localhost): a hidden text area.
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.className = 'visually-hidden';
    document.body.append(area);
    area.select();
    let done = false;
    try {
      done = document.execCommand('copy');
    } catch {
      done = false;
    }
    area.remove();
    return done;
  }
}

/** A button that copies `text` to the clipboard and says so for two seconds. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }): JSX.Element {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  useEffect(() => {
    if (state === 'idle') return undefined;
    const timer = setTimeout(() => setState('idle'), 2000);
    return () => clearTimeout(timer);
  }, [state]);
  return (
    <>
      <button type="button" class="button small" onClick={async () => setState((await copy(text)) ? 'copied' : 'failed')}>
        {state === 'copied' ? 'Copied' : label}
      </button>
      <span class="visually-hidden" role="status">
        {state === 'copied' ? 'Copied to the clipboard' : state === 'failed' ? 'Could not copy: select the text and copy it' : ''}
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
