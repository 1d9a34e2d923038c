import { token } from './token.js';

/** A cancellable pending timer. Cancelling twice, or after it fired, does nothing. */
export interface Timer {
  cancel(): void;
}

/**
 * Time, injected. Everything under framework/ and plugins/ reads time and arms timers only
 * through this, so the simulation harness can run hours of virtual time in milliseconds and
 * replay a failing seed exactly.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch (virtual in simulation). */
  now(): number;
  /** Calls `fn` once, `ms` milliseconds from now. */
  setTimer(ms: number, fn: () => void): Timer;
  /**
   * Resolves after `ms` milliseconds; rejects with the signal's reason if it aborts first.
   * The timer is released on abort, so a cancelled wait holds nothing.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const CLOCK = token<Clock>('Clock');
