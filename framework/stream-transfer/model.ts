/**
 * The records of the stream-transfer variant's replicated metadata: which nodes exist, which
 * node owns each stream at which epoch, and which transfers are pending. Each record is plain
 * JSON, because it crosses the network and the disk inside the MetadataConsensus log and
 * snapshots; `StreamMetadata` (stream-metadata.ts) holds them with their indexes.
 */

export type NodeId = string;
export type StreamId = string;

/** Stream, node and producer ids: short, printable, safe inside object keys and URLs. */
import type { Labels, StreamPlacement } from './labels.js';
import type { MaintenanceWindow } from './maintenance.js';

export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** The most streams one node may be given room for: ten times the million a cluster is sized for. */
export const MAX_NODE_SLOTS = 10_000_000;

export interface NodeRecord {
  id: NodeId;
  /** Base URL of the node's HTTP API, handed to clients in 409 hints. */
  address: string;
  /** How many streams the node may own (pending incoming transfers count against it). */
  slots: number;
  /** A draining node receives no new placements and gives away every stream it owns. */
  draining: boolean;
  /** Transfers the drain keeps in flight at once. */
  drainInFlight: number;
  /** The audit record id of the drain in force: what the records of its transfers name as cause. */
  drainCause?: string;
  /**
   * Alive / Suspect / Dead as the metadata leader last published it (from the node's lease
   * renewals; see node-liveness.ts). Absent means Alive: a node is Alive when it registers.
   */
  liveness?: NodeLiveness;
  /** What placements match against (`{"zone": "z1"}`); absent means none. */
  labels?: Labels;
  /** A maintenance window scheduled or under way (maintenance.ts). */
  maintenance?: MaintenanceWindow;
  /** Its window is over: streams are being handed back at this pace. */
  returning?: { movesPerSecond: number };
}

export type NodeLiveness = 'Alive' | 'Suspect' | 'Dead';

export function livenessOf(node: NodeRecord): NodeLiveness {
  return node.liveness ?? 'Alive';
}

/** The last batch a producer appended to a stream, so a retry of it is answered, not re-appended. */
export interface ProducerMark {
  seq: number;
  /** Offset of the batch's first record. */
  first: number;
  count: number;
}

export interface StreamRecord {
  id: StreamId;
  owner: NodeId;
  /**
   * The owner's session number. Each open is a new epoch (creation opens epoch 1); at most one
   * node accepts appends at a given epoch, and epochs of a stream only grow.
   */
  epoch: number;
  /** `closed` once the owner recorded its close at `epoch`; nothing is appended until reopened. */
  state: 'open' | 'closed';
  /** Offset the next record gets: exact when closed, a lower bound while open. */
  tail: number;
  /** Producer marks as of the last close; what carries deduplication across a handoff. */
  producers: Record<string, ProducerMark>;
  /**
   * Set when a failover gave this epoch to its owner without the old owner's close: `tail` and
   * `producers` are only where the old epoch began, so the owner finds the real tail in the
   * object store and fences the old owner there before it serves. Cleared by the next close.
   */
  takeover?: {
    from: NodeId;
    epoch: number;
    /** The audit record of the failover that gave this epoch. */
    cause?: string;
    /** The new owner found the tail and wrote its fence (its record is sealed). */
    fenced?: true;
  };
  /** Where the stream may and would rather live; every move respects it (placement-rules.ts). */
  placement?: StreamPlacement;
}

/** Why a transfer was proposed; `maintenance` is a stream handed back to a node whose window ended. */
export type TransferReason = 'admin' | 'drain' | 'rebalance' | 'maintenance';

/** A transfer in progress: the stream's source and target, keyed by stream id. */
export interface PendingTransfer {
  stream: StreamId;
  source: NodeId;
  target: NodeId;
  /** The stream's epoch when the transfer was accepted; the target will open at a later one. */
  epoch: number;
  reason: TransferReason;
  /** Log index of the command that created it (ordering, and age for operators). */
  since: number;
  /** The audit record of its proposal, and the drain or rebalance it belongs to. */
  proposal?: string;
  cause?: string;
}

/** One planned move of a rebalance, started when the in-flight bound allows. */
export interface PlannedMove {
  stream: StreamId;
  target: NodeId;
}

/** A planned move as the admin API answers it: with the node the stream leaves (null: gone since). */
export interface PlannedMoveFrom extends PlannedMove {
  source: NodeId | null;
}

export { StreamMetadata, emptyMetadata, type RebalanceRun, type StreamMetadataSnapshot } from './stream-metadata.js';

/** Reads an own property only: ids like "constructor" must never reach Object.prototype. */
export function own<T>(record: Record<string, T>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

