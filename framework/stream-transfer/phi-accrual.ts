/**
 * Phi accrual failure detection (Hayashibara et al., as Cassandra and Akka use it): instead of
 * one fixed silence, each node's verdict is how unlikely its current silence is given the gaps
 * between its renewals seen so far. On a quiet cluster the gaps are regular and a silence a few
 * periods long is already very unlikely; on a loaded machine they spread out, and the same
 * silence is no evidence. The gaps are modelled as a normal distribution (mean and standard
 * deviation over a bounded window), shifted by an acceptable pause so that one GC or a short
 * stall is never a verdict by itself.
 */
export interface PhiAccrualOptions {
  /** Phi at or above which a node is Dead (8: a chance of about 1 in 10^8 of being wrong). */
  threshold: number;
  /** A silence this much longer than the usual gap counts as normal (a GC, a slow write). */
  acceptablePauseMs: number;
  /** The spread assumed at least, so a run of perfectly regular gaps does not make phi jumpy. */
  minStdDevMs: number;
  /** How many recent gaps are kept per node. */
  window: number;
}

export const DEFAULT_PHI_ACCRUAL_OPTIONS: PhiAccrualOptions = {
  threshold: 8,
  acceptablePauseMs: 500,
  minStdDevMs: 50,
  window: 100,
};

/** The gaps between one node's renewals as seen, a bounded ring with running sums. */
export class ArrivalWindow {
  private readonly gaps: number[] = [];
  private next = 0;
  private sum = 0;
  private sumOfSquares = 0;

  constructor(private readonly capacity: number) {}

  add(gapMs: number): void {
    if (this.gaps.length < this.capacity) {
      this.gaps.push(gapMs);
    } else {
      const old = this.gaps[this.next]!;
      this.sum -= old;
      this.sumOfSquares -= old * old;
      this.gaps[this.next] = gapMs;
      this.next = (this.next + 1) % this.capacity;
    }
    this.sum += gapMs;
    this.sumOfSquares += gapMs * gapMs;
  }

  get size(): number {
    return this.gaps.length;
  }

  get mean(): number {
    return this.gaps.length === 0 ? 0 : this.sum / this.gaps.length;
  }

  get stdDev(): number {
    if (this.gaps.length === 0) return 0;
    const mean = this.mean;
    return Math.sqrt(Math.max(0, this.sumOfSquares / this.gaps.length - mean * mean));
  }
}

/**
 * Phi of a silence of `silenceMs` for gaps of the given mean and spread: -log10 of the chance
 * that a gap is longer still. Uses the logistic approximation of the normal tail that Akka uses,
 * computed in logarithms so it stays finite and monotonic far into the tail (where 1 - cdf underflows to 0).
 */
export function phi(silenceMs: number, meanMs: number, stdDevMs: number): number {
  const y = (silenceMs - meanMs) / stdDevMs;
  const exponent = y * (1.5976 + 0.070566 * y * y);
  const e = Math.exp(-exponent);
  // -log10(e / (1 + e)), taken apart so that it stays finite where e underflows to 0.
  if (silenceMs > meanMs) return exponent / Math.LN10 + Math.log10(1 + e);
  return -Math.log10(1 - 1 / (1 + e));
}

/** Phi for one node's window, or undefined while too few gaps were seen to judge by them. */
export function phiOf(
  window: ArrivalWindow,
  silenceMs: number,
  options: PhiAccrualOptions,
): number | undefined {
  if (window.size < MIN_GAPS) return undefined;
  const mean = window.mean + options.acceptablePauseMs;
  return phi(silenceMs, mean, Math.max(window.stdDev, options.minStdDevMs));
}

/** Below this many gaps the fixed thresholds decide: two or three gaps say little of a spread. */
export const MIN_GAPS = 4;
