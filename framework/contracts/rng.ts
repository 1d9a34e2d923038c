import { token } from './token.js';

/**
 * Randomness, injected. Election timeouts, jitter and minted identities all come from here so
 * one seed replays a whole simulated run.
 */
export interface Rng {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [0, maxExclusive). */
  int(maxExclusive: number): number;
  /** `length` random bytes, as lowercase hex (2 characters per byte). */
  hex(bytes: number): string;
}

export const RNG = token<Rng>('Rng');
