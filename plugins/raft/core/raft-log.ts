import type { LogStorage } from './storage.js';
import type { Entry, Snapshot } from './types.js';

/**
 * A Raft invariant was about to be broken. Never caught: the member stops rather than diverge.
 *
 * @internal
 */
export class RaftInvariantError extends Error {}

/**
 * The log as a core sees it (etcd's raftLog): the stable storage, then the unstable tail that
 * the driver has not persisted yet (possibly headed by a received snapshot), plus the commit and
 * apply cursors. Only persisted entries are handed out for applying.
 *
 * @internal
 */
export class RaftLog {
  private unstableSnapshot: Snapshot | undefined;
  private unstable: Entry[] = [];
  /** Index of unstable[0]. */
  private offset: number;
  committed: number;
  applied: number;

  constructor(
    readonly storage: LogStorage,
    applied: number,
  ) {
    this.offset = storage.lastIndex() + 1;
    this.committed = storage.hardState().commit;
    const floor = storage.firstIndex() - 1;
    // A snapshot holds only committed entries, so its index is committed even when the durable
    // commit index is older (a commit-only hard state is not written on its own).
    const snapshotIndex = storage.snapshot().meta.index;
    if (this.committed < Math.max(floor, snapshotIndex))
      this.committed = Math.max(floor, snapshotIndex);
    this.applied = Math.max(applied, floor);
    if (this.applied > this.committed) {
      throw new RaftInvariantError(`applied ${this.applied} is past commit ${this.committed}`);
    }
  }

  firstIndex(): number {
    if (this.unstableSnapshot) return this.unstableSnapshot.meta.index + 1;
    return this.storage.firstIndex();
  }

  lastIndex(): number {
    if (this.unstable.length > 0) return this.offset + this.unstable.length - 1;
    if (this.unstableSnapshot) return this.unstableSnapshot.meta.index;
    return this.storage.lastIndex();
  }

  lastTerm(): number {
    return this.term(this.lastIndex()) ?? 0;
  }

  /** Last index known durable: what this member may count towards a quorum. */
  persistedIndex(): number {
    // A received snapshot replaces the log; nothing of the new log is durable until it is.
    if (this.unstableSnapshot) return 0;
    return this.offset - 1;
  }

  /** Term of entry i, or undefined when compacted away or not (yet) in the log. */
  term(i: number): number | undefined {
    if (i < this.firstIndex() - 1 || i > this.lastIndex()) return undefined;
    if (this.unstableSnapshot && i === this.unstableSnapshot.meta.index)
      return this.unstableSnapshot.meta.term;
    if (i >= this.offset && i < this.offset + this.unstable.length)
      return this.unstable[i - this.offset].term;
    if (this.unstableSnapshot) return undefined;
    return this.storage.term(i);
  }

  matchTerm(i: number, term: number): boolean {
    return this.term(i) === term;
  }

  /** Entries [lo, hi); undefined when part of the range is compacted. */
  slice(lo: number, hi: number): Entry[] | undefined {
    if (lo > hi) throw new RaftInvariantError(`invalid slice [${lo}, ${hi})`);
    if (lo < this.firstIndex()) return undefined;
    if (hi > this.lastIndex() + 1)
      throw new RaftInvariantError(`slice [${lo}, ${hi}) past last ${this.lastIndex()}`);
    // One copy, and no spread: a long range (a follower catching up) would overflow the stack.
    if (lo >= this.offset) return this.unstable.slice(lo - this.offset, hi - this.offset);
    const out = this.storage.entries(lo, Math.min(hi, this.offset));
    for (let i = this.offset; i < hi; i++) out.push(this.unstable[i - this.offset]);
    return out;
  }

  /** At most `max` entries from `lo`; undefined when `lo` is compacted. */
  entriesFrom(lo: number, max: number): Entry[] | undefined {
    const last = this.lastIndex();
    if (lo > last) return [];
    return this.slice(lo, Math.min(last + 1, lo + max));
  }

  isUpToDate(lastIndex: number, term: number): boolean {
    const myTerm = this.lastTerm();
    return term > myTerm || (term === myTerm && lastIndex >= this.lastIndex());
  }

  /**
   * The follower side of AppendEntries: if our entry at `index` has `logTerm`, take the new
   * entries (truncating a conflicting suffix) and advance commit. Returns the last index now
   * known to match the leader, or undefined when the leader must probe further back.
   */
  maybeAppend(
    index: number,
    logTerm: number,
    committed: number,
    entries: Entry[],
  ): number | undefined {
    if (!this.matchTerm(index, logTerm)) return undefined;
    const lastNew = index + entries.length;
    const conflict = this.findConflict(entries);
    if (conflict !== 0) {
      if (conflict <= this.committed) {
        throw new RaftInvariantError(
          `entry ${conflict} conflicts with committed entry (commit ${this.committed})`,
        );
      }
      this.append(entries.slice(conflict - index - 1));
    }
    this.commitTo(Math.min(committed, lastNew));
    return lastNew;
  }

  /** First index among `entries` whose term differs from ours (or that we lack); 0 if none. */
  private findConflict(entries: Entry[]): number {
    for (const e of entries) {
      if (!this.matchTerm(e.index, e.term)) return e.index;
    }
    return 0;
  }

  /**
   * The largest index <= `index` whose term is <= `term` (etcd's findConflictByTerm): where the
   * two logs can possibly agree, so the leader skips a whole divergent term in one round trip.
   */
  findConflictByTerm(index: number, term: number): number {
    for (; index > 0; index--) {
      const t = this.term(index);
      if (t === undefined) return index;
      if (t <= term) break;
    }
    return index;
  }

  append(entries: Entry[]): number {
    if (entries.length === 0) return this.lastIndex();
    const after = entries[0].index - 1;
    if (after < this.committed) {
      throw new RaftInvariantError(
        `append after ${after} would overwrite committed ${this.committed}`,
      );
    }
    const first = after + 1;
    if (first === this.offset + this.unstable.length) {
      for (const e of entries) this.unstable.push(e);
    } else if (first <= this.offset) {
      // Replaces the whole unstable tail and shadows the stable entries from `first` on; the
      // driver's storage.append truncates them when these entries are persisted.
      this.offset = first;
      this.unstable = [...entries];
    } else {
      this.unstable = this.unstable.slice(0, first - this.offset).concat(entries);
    }
    return this.lastIndex();
  }

  commitTo(index: number): void {
    if (index <= this.committed) return;
    if (index > this.lastIndex()) {
      throw new RaftInvariantError(`commit ${index} is past the last index ${this.lastIndex()}`);
    }
    this.committed = index;
  }

  /** Commits `index` only if it holds an entry of `term` (the current-term rule). */
  maybeCommit(index: number, term: number): boolean {
    if (index > this.committed && this.term(index) === term) {
      this.commitTo(index);
      return true;
    }
    return false;
  }

  restore(snapshot: Snapshot): void {
    this.committed = snapshot.meta.index;
    this.unstableSnapshot = snapshot;
    this.offset = snapshot.meta.index + 1;
    this.unstable = [];
  }

  pendingSnapshot(): Snapshot | undefined {
    return this.unstableSnapshot;
  }

  unstableEntries(): Entry[] {
    return this.unstable;
  }

  /**
   * Committed, persisted entries not yet handed out for applying, at most `max` of them (the
   * rest come in the next Ready, so one Ready's apply stays short: etcd's
   * MaxCommittedSizePerReady).
   */
  nextCommittedEntries(max = Infinity): Entry[] {
    if (this.unstableSnapshot) return [];
    const lo = Math.max(this.applied + 1, this.firstIndex());
    const hi = Math.min(Math.min(this.committed, this.offset - 1) + 1, lo + max);
    if (lo >= hi) return [];
    return this.slice(lo, hi) ?? [];
  }

  hasNextCommittedEntries(): boolean {
    if (this.unstableSnapshot) return false;
    return (
      Math.min(this.committed, this.offset - 1) > Math.max(this.applied, this.firstIndex() - 1)
    );
  }

  /** The driver persisted unstable entries up to (index, term). */
  stableTo(index: number, term: number): void {
    if (index < this.offset) return;
    const t = this.term(index);
    if (t !== term) return;
    this.unstable = this.unstable.slice(index + 1 - this.offset);
    this.offset = index + 1;
  }

  stableSnapTo(index: number): void {
    if (this.unstableSnapshot && this.unstableSnapshot.meta.index === index)
      this.unstableSnapshot = undefined;
  }

  appliedTo(index: number): void {
    if (index === 0) return;
    if (index > this.committed || index < this.applied) {
      throw new RaftInvariantError(`applied ${index} outside [${this.applied}, ${this.committed}]`);
    }
    this.applied = index;
  }
}
