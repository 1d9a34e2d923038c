import type { MemberId } from '@baton/contracts';
import type { Entry, HardState, Snapshot } from './types.js';

/**
 * The stable part of a core's log, read-only from the core's point of view (etcd's Storage).
 * The driver writes it after the entries are durable; the core only reads.
 *
 * @internal
 */
export interface LogStorage {
  hardState(): HardState;
  /** Index of the first entry still available (snapshot index + 1). */
  firstIndex(): number;
  lastIndex(): number;
  /** Term of entry i, for snapshot.index <= i <= lastIndex; undefined outside that range. */
  term(i: number): number | undefined;
  /** Entries [lo, hi), lo >= firstIndex, hi <= lastIndex + 1, in a new array the caller owns. */
  entries(lo: number, hi: number): Entry[];
  snapshot(): Snapshot;
}

/**
 * Thrown when a caller asks storage for something it cannot have: a bug, never a fault.
 *
 * @internal
 */
export class LogStorageError extends Error {}

/**
 * The in-memory stable log (etcd's MemoryStorage): a snapshot, the entries after the compaction
 * point and the hard state. The driver keeps it equal to what is durable; on restart it is
 * rebuilt from disk. The compaction point never passes the snapshot, so a follower that needs
 * anything older than the retained entries can always be sent the snapshot instead.
 *
 * @internal
 */
export class MemoryLogStorage implements LogStorage {
  private snap: Snapshot;
  /** Index and term of the last compacted entry (the entry just before `ents[0]`). */
  private offsetIndex = 0;
  private offsetTerm = 0;
  private ents: Entry[] = [];
  private hs: HardState = { term: 0, vote: '', commit: 0 };

  constructor(initialVoters: MemberId[] = []) {
    this.snap = { meta: { index: 0, term: 0, voters: [...initialVoters].sort() }, data: null };
  }

  hardState(): HardState {
    return { ...this.hs };
  }

  setHardState(hs: HardState): void {
    this.hs = { ...hs };
  }

  firstIndex(): number {
    return this.offsetIndex + 1;
  }

  lastIndex(): number {
    return this.offsetIndex + this.ents.length;
  }

  term(i: number): number | undefined {
    if (i === this.offsetIndex) return this.offsetTerm;
    if (i < this.offsetIndex || i > this.lastIndex()) return undefined;
    return this.ents[i - this.offsetIndex - 1].term;
  }

  entries(lo: number, hi: number): Entry[] {
    if (lo < this.firstIndex() || hi > this.lastIndex() + 1 || lo > hi) {
      throw new LogStorageError(
        `entries [${lo}, ${hi}) outside the stable log [${this.firstIndex()}, ${this.lastIndex() + 1})`,
      );
    }
    return this.ents.slice(lo - this.offsetIndex - 1, hi - this.offsetIndex - 1);
  }

  snapshot(): Snapshot {
    return this.snap;
  }

  /** Appends durable entries, truncating any stable suffix they conflict with. */
  append(entries: readonly Entry[]): void {
    if (entries.length === 0) return;
    const first = entries[0].index;
    if (first > this.lastIndex() + 1) {
      throw new LogStorageError(`append at ${first} leaves a gap after ${this.lastIndex()}`);
    }
    // Entries at or below the compaction point are already covered by the snapshot.
    const skip = Math.max(0, this.offsetIndex + 1 - first);
    const keep = first + skip - this.offsetIndex - 1;
    // In place: copying the whole stable log on every append made each append cost O(log size).
    // Entries are never mutated once created, so other holders of the old array see no change
    // they could rely on (slices handed out by `entries` are copies).
    if (this.ents.length !== keep) this.ents.length = keep;
    for (let i = skip; i < entries.length; i++) this.ents.push(entries[i]);
  }

  /** Replaces everything with a received snapshot (the log restarts after it). */
  applySnapshot(snapshot: Snapshot): void {
    if (snapshot.meta.index < this.snap.meta.index) {
      throw new LogStorageError(
        `snapshot ${snapshot.meta.index} is older than ${this.snap.meta.index}`,
      );
    }
    this.snap = snapshot;
    this.offsetIndex = snapshot.meta.index;
    this.offsetTerm = snapshot.meta.term;
    this.ents = [];
  }

  /** Records a snapshot the application took of its state at `index` (<= applied). */
  createSnapshot(index: number, voters: MemberId[], data: unknown): Snapshot {
    const term = this.term(index);
    if (term === undefined || index < this.snap.meta.index) {
      throw new LogStorageError(
        `cannot snapshot at ${index}: outside [${this.snap.meta.index}, ${this.lastIndex()}]`,
      );
    }
    if (index === this.snap.meta.index) return this.snap;
    this.snap = { meta: { index, term, voters: [...voters].sort() }, data };
    return this.snap;
  }

  /** Drops entries up to `index`, which must not pass the snapshot. */
  compact(index: number): void {
    if (index <= this.offsetIndex) return;
    if (index > this.snap.meta.index) {
      throw new LogStorageError(
        `cannot compact to ${index}: past the snapshot at ${this.snap.meta.index}`,
      );
    }
    const term = this.term(index)!;
    this.ents = this.ents.slice(index - this.offsetIndex);
    this.offsetIndex = index;
    this.offsetTerm = term;
  }
}
