import { token } from '@baton/contracts';
import type { FeedOrigin } from './change-feed.js';

export interface ProbeOptions {
  /** Aborts the probe (a cancel of the plan ends the wait outright). */
  signal: AbortSignal;
  /** Gives up after this long and reads as no frontier (seed 003: ten seconds). */
  timeoutMs: number;
  /**
   * Ask the target to hold its answer until it has applied the feed through `serial`, or for
   * `waitMs` (shorter than the timeout) with what it has then: the reading arrives on the
   * target's apply instead of at the next re-probe. A target that does not know waiting probes
   * answers at once.
   */
  waitFor?: { serial: number; waitMs: number };
}

/**
 * How far a target datacenter has applied one feed, and in which replica storage: `replica`
 * names the files every member of the target read it from. A different `replica` than the last
 * reading means the target's replica was wiped or reset since (a lost disk): its serial may have
 * gone backwards, and a frontier read before no longer says anything.
 */
export interface FrontierReading {
  serial: number;
  replica: string;
  /**
   * Every member held its answer for `waitFor` (answered on reaching the serial, or once the wait
   * ran out): the caller may ask again without backing off first. Absent when any member answered
   * at once (no wait asked, or a member that does not know waiting probes).
   */
  waited?: boolean;
}

/**
 * Reads how far a target datacenter has applied `origin`'s change feed (in the origin's current
 * incarnation: a target holding another history reads 0), through the addresses the roster
 * resolves for it. `undefined` means "no frontier": the target is unknown to the roster,
 * unreachable, or too slow. A reading never advances a plan it cannot justify; an abort rejects
 * with the signal's reason.
 */
export interface FrontierProbe {
  probe(target: string, origin: FeedOrigin, options: ProbeOptions): Promise<FrontierReading | undefined>;
}

export const FRONTIER_PROBE = token<FrontierProbe>('authority-transfer.FrontierProbe');

/** One member's answer: its applied serial and the storage id of its replica. */
export interface MemberReading {
  member: string;
  serial: number;
  replica: string | undefined;
  /** The member held its answer for the asked serial (see FrontierReading.waited). */
  waited?: boolean;
}

/**
 * A datacenter has applied a serial only when every one of its members has: whichever member
 * serves the authority after the move must hold every acknowledged write. One member without a
 * reading leaves the datacenter without a frontier. The datacenter's replica names every
 * member's, so a wipe at any one of them shows.
 */
export function datacenterFrontier(readings: readonly (MemberReading | undefined)[]): FrontierReading | undefined {
  if (readings.length === 0) return undefined;
  let min = Infinity;
  const replicas: string[] = [];
  for (const reading of readings) {
    if (reading === undefined) return undefined;
    min = Math.min(min, reading.serial);
    replicas.push(`${reading.member}=${reading.replica ?? 'none'}`);
  }
  const reading: FrontierReading = { serial: min, replica: replicas.sort().join(',') };
  if (readings.every((r) => r!.waited === true)) reading.waited = true;
  return reading;
}
