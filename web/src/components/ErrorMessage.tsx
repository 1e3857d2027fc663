import type { JSX } from 'preact';
import { ApiError } from '../api.ts';

/** The sentence to show for an error of any kind (an ApiError carries the server's message). */
export function errorText(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.status === 0 || error.status >= 500) return `The server could not answer (${error.message}). Try again in a moment.`;
    return error.message;
  }
  if (error instanceof TypeError) return 'The server could not be reached. Check your connection and try again.';
  if (error instanceof Error) return error.message;
  return String(error);
}

/** An error, announced to screen readers (role="alert"); renders nothing when `error` is empty. */
export function ErrorMessage({ error, onRetry }: { error: unknown; onRetry?: () => void }): JSX.Element | null {
  if (error === null || error === undefined || error === '' || error === false) return null;
  return (
    <div class="error" role="alert">
      <span>{typeof error === 'string' ? error : errorText(error)}</span>
      {onRetry && (
        <button type="button" class="button small" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}

/** A success or information line, announced politely (role="status"). */
export function Notice({ children }: { children: JSX.Element | string | null | undefined | false }): JSX.Element {
  return (
    <p class={children ? 'notice' : 'notice empty'} role="status">
      {children || null}
    </p>
  );
}
