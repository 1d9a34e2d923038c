import type { Clock, Rng } from '@baton/contracts';

export interface RetrySettings {
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

/** What the policy needs to know about a failure. */
export type FailureKind = 'transient' | 'final';

/**
 * Tries `operation` up to `attempts` times, sleeping between tries with exponential back-off and
 * full jitter (a uniform draw in [0, min(max, base * 2^retry)]), so clients that failed together
 * do not retry together. Time and randomness come from the injected Clock and Rng, so a test (or
 * the simulation) can replay the schedule exactly. Returns the last failure when every try failed.
 */
export async function withRetries<T>(
  settings: RetrySettings,
  clock: Clock,
  rng: Rng,
  classify: (error: unknown) => FailureKind,
  operation: (attempt: number) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation(attempt);
    } catch (error) {
      if (classify(error) === 'final' || attempt >= settings.attempts) throw error;
      await clock.sleep(backoffDelay(settings, attempt, rng));
    }
  }
}

/** The pause after the `attempt`-th failed try. */
export function backoffDelay(settings: RetrySettings, attempt: number, rng: Rng): number {
  const ceiling = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** (attempt - 1));
  return Math.floor(rng.next() * (ceiling + 1));
}
