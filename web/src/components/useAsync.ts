import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface AsyncState<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  /** Runs the loader again (keeps the current data on screen meanwhile). */
  reload: () => void;
  /** Replaces the data locally (after a write whose answer is the new state). */
  setData: (data: T) => void;
}

/**
 * Loads with `load()` when the component mounts and whenever `deps` change; an answer that comes
 * back after a newer request started (or after unmounting) is dropped.
 */
export function useAsync<T>(load: () => Promise<T>, deps: readonly unknown[]): AsyncState<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({
    data: undefined,
    error: null,
    loading: true,
  });
  const generation = useRef(0);
  const loader = useRef(load);
  loader.current = load;

  const run = useCallback(() => {
    const mine = ++generation.current;
    setState((previous) => ({ ...previous, loading: true, error: null }));
    loader.current().then(
      (data) => {
        if (mine === generation.current) setState({ data, error: null, loading: false });
      },
      (error: unknown) => {
        if (mine === generation.current) setState((previous) => ({ ...previous, error, loading: false }));
      },
    );
  }, []);

  useEffect(() => {
    run();
    return () => {
      generation.current++;
    };
  }, deps);

  const setData = useCallback((data: T) => setState({ data, error: null, loading: false }), []);
  return { ...state, reload: run, setData };
}
