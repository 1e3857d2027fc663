// One read per key: refetches when the key changes, keeps the last answer on screen while the next
// one loads (no layout jump), and drops answers that arrive after a newer request started.
import { useEffect, useState } from 'preact/hooks';

export interface Fetched<T> {
  data: T | undefined;
  error: Error | null;
  loading: boolean;
  reload: () => void;
}

export function useFetch<T>(load: (() => Promise<T>) | null, key: string): Fetched<T> {
  const [state, setState] = useState<{ data: T | undefined; error: Error | null; loading: boolean; key: string | null }>({
    data: undefined,
    error: null,
    loading: load !== null,
    key: null,
  });
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    if (!load) {
      // Nothing to read (yet): what was read last stays on screen.
      setState((previous) => ({ ...previous, error: null, loading: false }));
      return;
    }
    let current = true;
    setState((previous) => ({ ...previous, loading: true, error: null }));
    load().then(
      (data) => {
        if (current) setState({ data, error: null, loading: false, key });
      },
      (error: unknown) => {
        if (current) {
          setState({ data: undefined, error: error instanceof Error ? error : new Error(String(error)), loading: false, key });
        }
      },
    );
    return () => {
      current = false;
    };
    // `load` is a new function on each render; the key says when it asks for something else.
  }, [key, attempt, load === null]);

  return { data: state.data, error: state.error, loading: state.loading, reload: () => setAttempt((value) => value + 1) };
}
