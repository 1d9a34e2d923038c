import type { Entry, HardState, Snapshot } from '../core/types.js';
import type { PersistBatch, RaftStorage, RecoveredState } from './raft-storage.js';

/**
 * Raft storage in memory. Everything `persist` accepted survives a simulated crash (a new
 * member started on the same instance recovers it); what a member had not yet handed to
 * `persist` is lost with it, as on a real disk after fsync. For tests and in-process clusters.
 * Snapshots are kept by reference (their images never change), so taking one costs nothing here.
 */
export class MemoryRaftStorage implements RaftStorage {
  private hardState: HardState = { term: 0, vote: '', commit: 0 };
  private snapshot: Snapshot | undefined;
  /**
   * The log as the batches it was persisted in (consecutive, each a run of consecutive
   * entries), not one entry at a time: storing every entry into one long-lived array cost
   * more than the rest of the write. Batches are never mutated once handed over.
   */
  private batches: (readonly Entry[])[] = [];
  /** Where the log starts: the index just after the compaction point. */
  private first = 1;
  /** Entries held, from `first` on. */
  private count = 0;
  private closed = false;
  persistCount = 0;

  async load(): Promise<RecoveredState> {
    this.closed = false;
    // The snapshot by reference: its image is frozen, and copying it would cost O(state).
    return {
      ...structuredClone({ hardState: this.hardState, entries: this.batches.flat() }),
      snapshot: this.snapshot,
    };
  }

  async persist(batch: PersistBatch): Promise<void> {
    this.assertOpen();
    this.persistCount++;
    if (batch.snapshot) {
      this.snapshot = batch.snapshot;
      this.batches = [];
      this.count = 0;
      this.first = batch.snapshot.meta.index + 1;
    }
    if (batch.entries.length > 0) {
      const at = batch.entries[0].index;
      if (at < this.first)
        throw new Error(`persist at ${at} is before the log start ${this.first}`);
      if (at > this.first + this.count) throw new Error(`persist at ${at} leaves a gap`);
      this.truncateFrom(at);
      this.batches.push(batch.entries);
      this.count += batch.entries.length;
    }
    if (batch.hardState) this.hardState = { ...batch.hardState };
  }

  async writeSnapshot(): Promise<void> {
    this.assertOpen();
  }

  async compact(snapshot: Snapshot, compactTo: number): Promise<void> {
    this.assertOpen();
    if (!this.snapshot || snapshot.meta.index > this.snapshot.meta.index) this.snapshot = snapshot;
    if (compactTo >= this.first) {
      this.dropThrough(compactTo);
      this.first = compactTo + 1;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /** Forgets entries at index >= `at` (a new leader's entries replace them). */
  private truncateFrom(at: number): void {
    while (this.batches.length > 0) {
      const last = this.batches[this.batches.length - 1];
      const start = last[0].index;
      const end = start + last.length - 1;
      if (end < at) return;
      if (start >= at) {
        this.batches.pop();
        this.count -= last.length;
        continue;
      }
      this.batches[this.batches.length - 1] = last.slice(0, at - start);
      this.count -= end - at + 1;
      return;
    }
  }

  /** Forgets entries at index <= `index` (covered by a snapshot). */
  private dropThrough(index: number): void {
    let drop = 0;
    while (drop < this.batches.length) {
      const b = this.batches[drop];
      const start = b[0].index;
      const end = start + b.length - 1;
      if (end <= index) {
        this.count -= b.length;
        drop++;
        continue;
      }
      if (start <= index) {
        this.batches[drop] = b.slice(index - start + 1);
        this.count -= index - start + 1;
      }
      break;
    }
    if (drop > 0) this.batches.splice(0, drop);
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('raft storage is closed');
  }
}
