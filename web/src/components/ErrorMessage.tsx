import type { JSX } from 'preact';
import { ApiError } from '../api.ts';
import { fieldSentence } from './Field.tsx';

/** A field's path in the API ("body.currentPassword", "query.steps[0].url") as words: "Current password". */
function fieldName(path: string): string {
  const last = path.replace(/^(body|query|path|headers)\.?/, '').split('.').pop() ?? '';
  const words = last.replace(/\[\d+\]/g, '').replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/_/g, ' ').trim().toLowerCase();
  return words ? words[0]!.toUpperCase() + words.slice(1) : '';
}

/**
 * A refusal's field messages as sentences ("Password: this is not the current password."), for a
 * form that shows them in one place; the API's own message ("body.password: is not the current
 * password") reads like code.
 */
function detailsText(details: ApiError['details']): string {
  return details
    .map((detail) => {
      const name = fieldName(detail.path);
      const sentence = fieldSentence(detail.message);
      return name && /^[A-Z][a-z]/.test(sentence) ? `${name}: ${sentence[0]!.toLowerCase()}${sentence.slice(1)}` : name ? `${name}: ${sentence}` : sentence;
    })
    .join(' ');
}

/** The sentence to show for an error of any kind (an ApiError carries the server's message). */
export function errorText(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.status === 0 || error.status >= 500) return `The server could not answer (${error.message}). Try again in a moment.`;
    if (error.status === 400 && error.details.length > 0) return detailsText(error.details);
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
