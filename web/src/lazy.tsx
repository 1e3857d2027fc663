// Pages loaded on first use, as their own chunks (no preact/compat needed for this).
import { type ComponentType, type JSX, h } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ErrorMessage, Loading } from './components/index.ts';

/** A component that loads `load()`'s component once, showing a loading line meanwhile. */
export function lazyComponent<P extends object>(load: () => Promise<ComponentType<P>>): (props: P) => JSX.Element {
  let loaded: ComponentType<P> | null = null;
  let pending: Promise<void> | null = null;
  let failure: unknown = null;
  function start(): Promise<void> {
    pending ??= load().then(
      (component) => {
        loaded = component;
      },
      (error: unknown) => {
        failure = error;
        pending = null;
      },
    );
    return pending;
  }
  return function Lazy(props: P): JSX.Element {
    const [, setTick] = useState(0);
    useEffect(() => {
      if (loaded) return undefined;
      let live = true;
      void start().then(() => live && setTick((tick) => tick + 1));
      return () => {
        live = false;
      };
    }, []);
    if (loaded) return h(loaded, props) as JSX.Element;
    if (failure) {
      return (
        <ErrorMessage
          error="This part of the dashboard could not be loaded (the server may have been upgraded). Reload the page."
          onRetry={() => location.reload()}
        />
      );
    }
    return <Loading />;
  };
}
