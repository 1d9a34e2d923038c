import type { ProducerMark, StreamId } from './model.js';

/** A producer's identity and the sequence number of one append batch. */
export interface ProducerStamp {
  id: string;
  seq: number;
}

/** Which producer batch, inside a records entry, covers which offsets. */
export interface BatchStamp extends ProducerStamp {
  first: number;
  count: number;
}

/**
 * What a node's local write-ahead log remembers: the lifecycle of each stream session it runs
 * and the records it accepted but has not yet flushed, so a restarted node can flush them and
 * close its streams at their epoch (seed 000, "Crashes").
 */
export type WalEntry =
  | {
      t: 'open';
      stream: StreamId;
      epoch: number;
      next: number;
      producers: Record<string, ProducerMark>;
      /** Segment slot of the next write at `next` (after a takeover's fence); absent means 0. */
      slot?: number;
    }
  /**
   * One flush cycle's records: exactly the records of one segment object, so a recovery re-flush
   * writes the same segment (same key, same content) the crashed node may already have written.
   */
  | { t: 'records'; stream: StreamId; epoch: number; first: number; bodies: string[]; stamps?: BatchStamp[]; slot?: number }
  | { t: 'flushed'; stream: StreamId; epoch: number; upTo: number }
  | { t: 'closed'; stream: StreamId; epoch: number; tail: number; producers: Record<string, ProducerMark> }
  /** The metadata recorded the close: the node no longer needs to remember this session. */
  | { t: 'settled'; stream: StreamId; epoch: number };

/**
 * The local WAL. `append` resolves only once the entries are durable (synced), and a crash keeps
 * a prefix of what was appended. File-backed in hosts, on a simulated disk in tests.
 */
export interface StreamWal {
  append(entries: readonly WalEntry[]): Promise<void>;
  /** Every durable entry, in append order (a torn last entry is dropped). */
  replay(): Promise<WalEntry[]>;
  /** Atomically replaces the whole log with `entries` (compaction). */
  rewrite(entries: readonly WalEntry[]): Promise<void>;
  close(): Promise<void>;
}

/** The WAL cannot be written: the node must stop acknowledging rather than guess. */
export class WalUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(`stream WAL unavailable: ${message}`, options);
    this.name = 'WalUnavailableError';
  }
}
