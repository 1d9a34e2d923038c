import { SystemClock } from '@baton/kernel/internal/system-clock.js';

/**
 * Waits until `condition` holds, re-checking every 20 ms; a throw counts as not yet (no leader,
 * a node not registered, a store still down). Fails after `ms` naming what it waited for and the
 * last error seen, never a blind sleep. Real time: these tests talk to real servers.
 */
export async function eventually(
  condition: () => Promise<boolean> | boolean,
  what: string,
  ms = 20_000,
): Promise<void> {
  const clock = new SystemClock();
  const deadline = clock.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      if (await condition()) return;
    } catch (error) {
      last = error;
    }
    if (clock.now() > deadline)
      throw new Error(
        `timed out after ${ms} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`,
      );
    await clock.sleep(20);
  }
}
