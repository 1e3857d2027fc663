import type { ComponentChildren, JSX } from 'preact';
import { ErrorMessage } from './ErrorMessage.tsx';
import { Loading } from './Spinner.tsx';
import type { AsyncState } from './useAsync.ts';

export interface LoadedProps<T> {
  state: AsyncState<T>;
  /** Shown instead of `children` when the data is an empty list. */
  empty?: ComponentChildren;
  loadingLabel?: string;
  /** What to show of the data, once loaded (kept on screen while it reloads). */
  children: (data: T) => ComponentChildren;
}

/** What useAsync loaded: its error (with "Try again"), a spinner until the first answer, then the data. */
export function Loaded<T>({ state, empty, loadingLabel, children }: LoadedProps<T>): JSX.Element {
  const { data, error, reload } = state;
  const isEmpty = empty !== undefined && Array.isArray(data) && data.length === 0;
  return (
    <>
      <ErrorMessage error={error} onRetry={reload} />
      {!data && !error && <Loading label={loadingLabel} />}
      {data ? (isEmpty ? empty : children(data)) : null}
    </>
  );
}
