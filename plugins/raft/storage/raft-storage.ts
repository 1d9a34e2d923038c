import { CorruptRecordError } from '@baton/contracts';
import type { Entry, HardState, Snapshot } from '../core/types.js';

/** What a member finds on its disk when it starts. */
export interface RecoveredState {
  hardState: HardState;
  /** The latest durable snapshot, if any (its voters are the configuration at its index). */
  snapshot?: Snapshot;
  /** Durable entries after the snapshot (or from index 1), in order, without gaps. */
  entries: Entry[];
}

/** One Ready's worth of durable writes. */
export interface PersistBatch {
  hardState?: HardState;
  /** Entries to append; an entry at index i replaces any stored entry at i or later. */
  entries: readonly Entry[];
  /**
   * A snapshot received from the leader: it replaces the whole log. Its file may already have
   * been written by `writeSnapshot` (then this only puts it in force).
   */
  snapshot?: Snapshot;
}

/**
 * Where a Raft member keeps what must survive a crash: hard state, log entries, snapshots.
 * `persist` resolves only once the batch is durable (synced); the driver sends no message
 * depending on it before that. Implementations: memory (tests, in-process clusters) and
 * append-only files.
 */
export interface RaftStorage {
  load(): Promise<RecoveredState>;
  persist(batch: PersistBatch): Promise<void>;
  /**
   * Writes a snapshot durably without putting it in force: the log and the recovered state do
   * not change, so it may run (for a while, on a large state) while `persist` calls go on. A
   * snapshot's `data` is a SnapshotImage (or a plain value, taken as its only piece).
   */
  writeSnapshot(snapshot: Snapshot): Promise<void>;
  /**
   * Puts a snapshot the member took of its own applied state in force (written by
   * `writeSnapshot` before), then forgets entries up to `compactTo` (<= snapshot index).
   * `retained` are the entries after `compactTo` still in the log, and `hardState` the current
   * one, for implementations that rewrite their log. Never concurrent with `persist`.
   */
  compact(snapshot: Snapshot, compactTo: number, retained: readonly Entry[], hardState: HardState): Promise<void>;
  close(): Promise<void>;
}

/**
 * The stored bytes are not a valid Raft log (beyond a torn tail): the member must not start.
 * `store` says whether the log or the snapshot in force is damaged, `file` and `offset` where.
 */
export class RaftStorageCorruptError extends CorruptRecordError {}
