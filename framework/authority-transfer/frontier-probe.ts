import { token } from '../contracts/token.js';
import type { FeedOrigin } from './change-feed.js';

export interface ProbeOptions {
  /** Aborts the probe (a cancel of the plan ends the wait outright). */
  signal: AbortSignal;
  /** Gives up after this long and reads as no frontier (seed 003: ten seconds). */
  timeoutMs: number;
}

/**
 * Reads how far a target datacenter has applied `origin`'s change feed (in the origin's current
 * incarnation: a target holding another history reads 0), through the addresses the roster
 * resolves for it. `undefined` means "no frontier": the target is unknown to the roster,
 * unreachable, or too slow. A reading never advances a plan it cannot justify; an abort rejects
 * with the signal's reason.
 */
export interface FrontierProbe {
  probe(target: string, origin: FeedOrigin, options: ProbeOptions): Promise<number | undefined>;
}

export const FRONTIER_PROBE = token<FrontierProbe>('authority-transfer.FrontierProbe');

/**
 * A datacenter has applied a serial only when every one of its members has: whichever member
 * serves the authority after the move must hold every acknowledged write. One member without a
 * reading leaves the datacenter without a frontier.
 */
export function datacenterFrontier(readings: readonly (number | undefined)[]): number | undefined {
  if (readings.length === 0) return undefined;
  let min = Infinity;
  for (const reading of readings) {
    if (reading === undefined) return undefined;
    min = Math.min(min, reading);
  }
  return min;
}
