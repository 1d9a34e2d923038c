import type { StateMachine } from '@baton/contracts/internal/metadata-consensus.js';
import {
  kvStateMachine,
  type KvCommand,
  type KvResult,
  type KvState,
} from '@baton/conformance/internal/kv-state-machine.js';
import { RaftSimCluster } from '@baton/testing/internal/raft-sim/raft-sim-cluster.js';
import type { LinkConditions } from '@baton/testing/internal/sim/network.js';
import { RaftConsensus } from '@baton/plugin-raft/internal/driver/raft-consensus.js';
import type { RaftTuning } from '@baton/plugin-raft/internal/driver/options.js';
import { MemoryRaftStorage } from '@baton/plugin-raft/internal/storage/memory-storage.js';
import type { RaftStorage } from '@baton/plugin-raft/internal/storage/raft-storage.js';
import { MemoryLogger } from './silent-logger.js';

export type KvRaft = RaftConsensus<KvState, KvCommand, KvResult>;

/**
 * The driver tests' cluster: the shared simulation harness (framework/testing/raft-sim) with
 * RaftConsensus members on memory storage, a kv state machine unless told otherwise, and a
 * logger that keeps records for assertions.
 */
export class SimCluster<S = KvState, C = KvCommand, R = KvResult> extends RaftSimCluster<
  S,
  C,
  R,
  RaftConsensus<S, C, R>,
  RaftStorage
> {
  declare readonly logger: MemoryLogger;

  constructor(
    voters: string[],
    readonly tuning: Partial<RaftTuning> = {},
    seed = 1,
    link: Partial<LinkConditions> = { minDelayMs: 1, maxDelayMs: 3 },
    machine: StateMachine<S, C, R> = kvStateMachine as unknown as StateMachine<S, C, R>,
  ) {
    super({
      voters,
      seed,
      link,
      machine,
      logger: new MemoryLogger(),
      factory: {
        storage: () => new MemoryRaftStorage(),
        member: (options) => new RaftConsensus<S, C, R>({ ...options, ...tuning }),
      },
    });
  }
}
