import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { describeError } from './api.js';

export interface Polled<T> {
  data: T | undefined;
  error: string | undefined;
  /** Asks again now (after an action), without waiting for the next tick. */
  refresh: () => void;
}

/**
 * Bounded polling: one request in flight at a time, the next one `intervalMs` after the last
 * answer, none while the tab is hidden. The last good answer stays on screen through an error.
 */
export function usePolling<T>(
  load: () => Promise<T>,
  intervalMs: number,
  deps: unknown[] = [],
): Polled<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const timer = useRef<number | undefined>(undefined);
  const running = useRef(false);
  const alive = useRef(true);
  const loadRef = useRef(load);
  loadRef.current = load;

  const tick = useCallback(async () => {
    if (running.current || !alive.current) return;
    window.clearTimeout(timer.current);
    running.current = true;
    try {
      const value = await loadRef.current();
      if (alive.current) {
        setData(value);
        setError(undefined);
      }
    } catch (e) {
      if (alive.current) setError(describeError(e));
    } finally {
      running.current = false;
      if (alive.current && document.visibilityState !== 'hidden')
        timer.current = window.setTimeout(tick, intervalMs); // clock-ok: the page runs in the browser, outside any simulated clock
    }
  }, [intervalMs]);

  useEffect(() => {
    alive.current = true;
    void tick();
    const onVisible = () => document.visibilityState === 'visible' && void tick();
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      alive.current = false;
      window.clearTimeout(timer.current);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, [tick, ...deps]);

  return { data, error, refresh: () => void tick() };
}
