import { useEffect, useState } from 'preact/hooks';

/**
 * Loads now and again every `everyMs` while the component shows (the consoles follow the API by polling);
 * a late answer after the component went away is dropped.
 */
export function usePolling<T>(load: () => Promise<T>, everyMs: number, deps: unknown[]) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    const run = () =>
      load().then(
        (d) => live && (setData(d), setError(null)),
        (e: unknown) => live && setError(e),
      );
    void run();
    const timer = setInterval(() => void run(), everyMs);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [...deps, tick]);
  return { data, error, reload: () => setTick((t) => t + 1) };
}
