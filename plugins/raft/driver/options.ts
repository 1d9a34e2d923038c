import type { Clock, Logger, StateMachine, MemberId, PeerTransport, Rng } from '@baton/contracts';
import type { RaftStorage } from '../storage/raft-storage.js';

export interface RaftTuning {
  /** Milliseconds per Raft tick. */
  tickMs: number;
  /** Followers campaign after [electionTicks, 2*electionTicks) ticks without a leader. */
  electionTicks: number;
  heartbeatTicks: number;
  /** Proposals waiting at this member (queued or appended, not yet applied) before refusing more. */
  maxQueue: number;
  /** Take a snapshot and compact the log every this many applied entries. */
  snapshotInterval: number;
  /** Entries kept behind a snapshot, so slightly lagging followers need no snapshot. */
  snapshotRetain: number;
  /** Idempotency keys remembered (replicated, oldest forgotten first). */
  idempotencyWindow: number;
  /** Default time a proposal or a membership change may take. */
  proposeTimeoutMs: number;
  /** Default time a linearizable read may take. */
  readTimeoutMs: number;
  maxInflight: number;
  maxEntriesPerMessage: number;
  /** Committed entries applied per Ready: bounds one step of the loop. */
  maxCommittedPerReady: number;
  /**
   * The loop hands the event loop back (ticks, heartbeats, the network, HTTP) once it has run
   * this long: applying a long backlog never holds the member past its peers' election timeout.
   */
  loopSliceMs: number;
}

export const DEFAULT_TUNING: RaftTuning = {
  tickMs: 10,
  electionTicks: 10,
  heartbeatTicks: 1,
  maxQueue: 4096,
  snapshotInterval: 10_000,
  snapshotRetain: 1_000,
  idempotencyWindow: 10_000,
  proposeTimeoutMs: 5_000,
  readTimeoutMs: 5_000,
  maxInflight: 256,
  maxEntriesPerMessage: 256,
  maxCommittedPerReady: 256,
  loopSliceMs: 5,
};

export interface RaftConsensusOptions<S, C, R> extends Partial<RaftTuning> {
  self: MemberId;
  /** The cluster's bootstrap voters (the configuration at index 0, identical on every member). */
  voters: MemberId[];
  /** Messages tagged with another cluster id are dropped. */
  cluster?: string;
  machine: StateMachine<S, C, R>;
  storage: RaftStorage;
  transport: PeerTransport;
  clock: Clock;
  rng: Rng;
  logger: Logger;
}
