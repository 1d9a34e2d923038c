import type { Clock } from '@baton/contracts';

export interface PollOptions {
  clock: Clock;
  /** Pause between two readings. */
  intervalMs: number;
  /** Gives up (done: false) once this much time has passed since the first reading. */
  timeoutMs: number;
}

/**
 * Reads a state until it satisfies `done` or the deadline passes, handing every reading to
 * `onReading` (progress display). Returns the last reading and whether it was done, so the
 * caller decides what an unfinished wait means.
 */
export async function pollUntil<T>(
  read: () => Promise<T>,
  done: (reading: T) => boolean,
  onReading: (reading: T) => void,
  options: PollOptions,
): Promise<{ reading: T; done: boolean }> {
  const deadline = options.clock.now() + options.timeoutMs;
  for (;;) {
    const reading = await read();
    onReading(reading);
    if (done(reading)) return { reading, done: true };
    if (options.clock.now() >= deadline) return { reading, done: false };
    await options.clock.sleep(
      Math.min(options.intervalMs, Math.max(0, deadline - options.clock.now())),
    );
  }
}
