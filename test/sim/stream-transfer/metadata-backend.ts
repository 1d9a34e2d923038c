import type {
  AppliedEntry,
  ProposeOptions,
  Receipt,
} from '@baton/contracts/internal/metadata-consensus.js';
import type { StreamCommand, StreamResult } from '@baton/stream-transfer/internal/commands.js';
import type { StreamMetadata } from '@baton/stream-transfer/internal/model.js';
import type { StreamConsensus } from '@baton/stream-transfer/internal/stream-node.js';
import type { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import type { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';

/** Undoes one metadata fault (a partition healed, a leader back). */
export type Undo = () => void;

/** Told of one entry one replica applied; `replica` changes when a replica restarts. */
export type AppliedListener = (
  replica: string,
  state: StreamMetadata,
  entry: AppliedEntry<StreamCommand, StreamResult>,
) => void;

/**
 * What carries a stream simulation's metadata: the nodes, the workload and the invariants are
 * the same whether it is one fault-injecting fake log or Raft members on a simulated network.
 * The backend owns virtual time, since Raft members run on it too.
 */
export interface StreamMetadataBackend {
  readonly clock: VirtualClock;
  /** The consensus a node's new process uses; for Raft, a new member on the node's surviving storage. */
  connect(node: string): Promise<StreamConsensus>;
  /** The node's process died: for Raft, its member dies with it. */
  crash(node: string): Promise<void>;
  /** An operator's command, sent through whichever member is reachable. */
  propose(command: StreamCommand, options?: ProposeOptions): Promise<Receipt<StreamResult>>;
  /** The freshest metadata (the workload's choices, the final check). */
  view(): StreamMetadata;
  /** Sees every entry every replica applies; `replica` changes when a replica restarts. */
  onApplied(fn: AppliedListener): void;
  /** Cuts `node` off the metadata (its view lags, its proposals fail); undefined when there is no such fault now. */
  partition(node: string, rng: SeededRng): Undo | undefined;
  /** `node` neither sends nor hears metadata traffic (its process is paused). */
  isolate(node: string): Undo | undefined;
  /** The leader goes away for a while; undefined when there is no leader to lose. */
  loseLeader(rng: SeededRng): Undo | undefined;
  /** Ends every metadata fault still in force. */
  healAll(): void;
  /** The metadata itself has settled: a leader, every replica at the same point. */
  settled(): boolean;
  /** Lets time move `ms` forward. */
  advance(ms: number): Promise<void>;
  /** What the final report adds about the metadata (network counters, faults left). */
  describe(): Record<string, unknown>;
}
