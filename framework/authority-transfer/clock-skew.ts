import type { Clock } from '@baton/contracts';

/** One peer's clock as last read against this member's. */
export interface PeerClockReading {
  peer: string;
  /** The peer's clock minus this member's, at the middle of the round trip that read it (ms). */
  offsetMs: number;
  /** Half the round trip: the offset is known to within this much either way (ms). */
  uncertaintyMs: number;
  /** This member's clock when the reading arrived. */
  at: number;
}

/** A peer whose clock is certainly further from this member's than the bound allows. */
export interface ClockSkewExcess extends PeerClockReading {
  boundMs: number;
}

/** Readings older than this say nothing of the clocks now (a peer down, or a partition). */
export const CLOCK_READING_TTL_MS = 60_000;

/**
 * What this member knows of its peers' clocks, read off the feed pulls it makes anyway (each
 * page carries the peer's clock when it answered). A registered transfer's deadline and thaw
 * time are the driver's clock, compared by every member with its own, past `expiryGraceMs`: two
 * clocks further apart than that would let a member expire a registration or lift a freeze
 * before the driver's own deadline. So the bound (`maxClockSkewMs`, below the grace) is stated
 * in the configuration, checked here on every pull, and a member that sees a peer's clock
 * certainly past it (offset beyond the bound by more than the round trip's uncertainty) drives
 * no new transfer until the clocks agree again.
 */
export class ClockSkew {
  private readonly readings = new Map<string, PeerClockReading>();
  private readonly onChange: (excess: ClockSkewExcess | undefined, reading: PeerClockReading) => void;

  constructor(
    readonly boundMs: number,
    private readonly clock: Clock,
    onChange: (excess: ClockSkewExcess | undefined, reading: PeerClockReading) => void = () => {},
  ) {
    this.onChange = onChange;
  }

  /**
   * A peer's clock (`peerNow`) read by a request sent at `sentAt` and answered at `receivedAt`
   * (this member's clock). A value that is not a finite number is no reading.
   */
  note(peer: string, sentAt: number, receivedAt: number, peerNow: unknown): void {
    if (typeof peerNow !== 'number' || !Number.isFinite(peerNow) || receivedAt < sentAt) return;
    const reading = { peer, offsetMs: peerNow - (sentAt + receivedAt) / 2, uncertaintyMs: (receivedAt - sentAt) / 2, at: receivedAt };
    const wasOver = this.over(this.readings.get(peer));
    this.readings.set(peer, reading);
    const isOver = this.over(reading);
    if (wasOver !== isOver) this.onChange(isOver ? { ...reading, boundMs: this.boundMs } : undefined, reading);
  }

  /** A fresh reading of a peer whose clock is certainly past the bound, the worst one. */
  exceeded(): ClockSkewExcess | undefined {
    let worst: PeerClockReading | undefined;
    for (const reading of this.readings.values()) {
      if (this.fresh(reading) && this.over(reading) && (!worst || Math.abs(reading.offsetMs) > Math.abs(worst.offsetMs))) worst = reading;
    }
    return worst && { ...worst, boundMs: this.boundMs };
  }

  /** Every peer's latest reading, fresh or not (the metrics and the members listing). */
  all(): PeerClockReading[] {
    return [...this.readings.values()].map((r) => ({ ...r }));
  }

  private over(reading: PeerClockReading | undefined): boolean {
    // Clocks read in whole milliseconds: one more of slack, so a bound of 0 is not a coin toss.
    return reading !== undefined && Math.abs(reading.offsetMs) - reading.uncertaintyMs - 1 > this.boundMs;
  }

  private fresh(reading: PeerClockReading): boolean {
    return this.clock.now() - reading.at <= CLOCK_READING_TTL_MS;
  }
}
