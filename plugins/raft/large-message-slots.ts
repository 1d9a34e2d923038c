import type { MemberId } from '@baton/contracts';

/** Why a large message was given no slot: its sender already has one, or every slot is taken. */
export type LargeSlotRefusal = 'sender-busy' | 'all-busy';

/**
 * The large messages (snapshots, large appends) being read now: at most one per sender, and at
 * most `limit` in all, since each may buffer up to maxLargeMessageBytes. Keyed by sender so that
 * a peer which stalls its body holds only its own slot: another peer's snapshot is still read.
 */
export class LargeMessageSlots {
  private readonly held = new Set<MemberId>();

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new RangeError(`large messages in flight must be a whole number of at least 1, got ${limit}`);
  }

  /** Messages being read now. */
  get inFlight(): number {
    return this.held.size;
  }

  /** Takes `from`'s slot and returns the function that gives it back (once), or says why not. */
  take(from: MemberId): { release: () => void } | { refused: LargeSlotRefusal } {
    if (this.held.has(from)) return { refused: 'sender-busy' };
    if (this.held.size >= this.limit) return { refused: 'all-busy' };
    this.held.add(from);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.held.delete(from);
      },
    };
  }
}
