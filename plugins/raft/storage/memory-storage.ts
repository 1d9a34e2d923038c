import type { Entry, HardState, Snapshot } from '../core/types.js';
import type { PersistBatch, RaftStorage, RecoveredState } from './raft-storage.js';

/**
 * Raft storage in memory. Everything `persist` accepted survives a simulated crash (a new
 * member started on the same instance recovers it); what a member had not yet handed to
 * `persist` is lost with it, as on a real disk after fsync. For tests and in-process clusters.
 */
export class MemoryRaftStorage implements RaftStorage {
  private hardState: HardState = { term: 0, vote: '', commit: 0 };
  private snapshot: Snapshot | undefined;
  private entries: Entry[] = [];
  /** Where `entries` starts: the index just after the compaction point. */
  private first = 1;
  private closed = false;
  persistCount = 0;

  async load(): Promise<RecoveredState> {
    this.closed = false;
    return structuredClone({ hardState: this.hardState, snapshot: this.snapshot, entries: this.entries });
  }

  async persist(batch: PersistBatch): Promise<void> {
    this.assertOpen();
    this.persistCount++;
    if (batch.snapshot) {
      this.snapshot = structuredClone(batch.snapshot);
      this.entries = [];
      this.first = batch.snapshot.meta.index + 1;
    }
    if (batch.entries.length > 0) {
      const at = batch.entries[0].index;
      if (at < this.first) throw new Error(`persist at ${at} is before the log start ${this.first}`);
      if (at > this.first + this.entries.length) throw new Error(`persist at ${at} leaves a gap`);
      // Truncate only when the batch overwrites a suffix: setting length is not free on a long log.
      if (this.entries.length !== at - this.first) this.entries.length = at - this.first;
      // Entries are never mutated once created: keeping references is as safe as copying.
      for (const e of batch.entries) this.entries.push(e);
    }
    if (batch.hardState) this.hardState = { ...batch.hardState };
  }

  async saveSnapshot(snapshot: Snapshot, compactTo: number): Promise<void> {
    this.assertOpen();
    if (!this.snapshot || snapshot.meta.index > this.snapshot.meta.index) this.snapshot = structuredClone(snapshot);
    if (compactTo >= this.first) {
      this.entries = this.entries.slice(compactTo + 1 - this.first);
      this.first = compactTo + 1;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('raft storage is closed');
  }
}
