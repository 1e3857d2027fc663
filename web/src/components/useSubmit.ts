import { useState } from 'preact/hooks';

/** What an action may answer: a success line to show (the notice), or nothing. */
export type SubmitAction = () => Promise<string | void> | string | void;

export interface SubmitOptions {
  /** A refusal found before sending anything (shown as the error; the action does not run), or nothing. */
  check?: () => string | null | undefined | false;
  /** The error to show for what the action threw (null for none); what it threw, without this. */
  describe?: (caught: unknown) => unknown;
}

export interface SubmitState {
  /** True while an action runs (the submit button is disabled and says so). */
  busy: boolean;
  /** What the last action failed with (an ApiError, an Error or a sentence), null otherwise. */
  error: unknown;
  /** The success line the last action answered, null until it did. */
  notice: string | null;
  setError: (error: unknown) => void;
  setNotice: (notice: string | null) => void;
  /** Runs `action`: the error and the notice cleared first, busy meanwhile, what it throws shown. */
  run: (action: SubmitAction, options?: SubmitOptions) => Promise<void>;
  /** A form's `onSubmit`: no page load, then `run`. */
  onSubmit: (action: SubmitAction, options?: SubmitOptions) => (event: Event) => void;
}

/** A form's (or a button's) submit state: busy while the request runs, the error it ended with. */
export function useSubmit(): SubmitState {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);

  async function run(action: SubmitAction, { check, describe }: SubmitOptions = {}): Promise<void> {
    setError(null);
    setNotice(null);
    const refusal = check?.();
    if (refusal) {
      setError(refusal);
      return;
    }
    setBusy(true);
    try {
      const answer = await action();
      if (typeof answer === 'string') setNotice(answer);
    } catch (caught) {
      setError(describe ? describe(caught) : caught);
    } finally {
      setBusy(false);
    }
  }

  const onSubmit = (action: SubmitAction, options?: SubmitOptions) => (event: Event) => {
    event.preventDefault();
    void run(action, options);
  };

  return { busy, error, notice, setError, setNotice, run, onSubmit };
}
