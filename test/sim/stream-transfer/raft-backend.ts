import {
  NotAppendedError,
  type ProposeOptions,
} from '@baton/contracts/internal/metadata-consensus.js';
import type { StreamCommand, StreamResult } from '@baton/stream-transfer/internal/commands.js';
import { emptyMetadata, type StreamMetadata } from '@baton/stream-transfer/internal/model.js';
import { StreamStateMachine } from '@baton/stream-transfer/internal/state-machine.js';
import type { StreamConsensus } from '@baton/stream-transfer/internal/stream-node.js';
import { RaftSimCluster } from '@baton/testing/internal/raft-sim/raft-sim-cluster.js';
import type { LinkConditions } from '@baton/testing/internal/sim/network.js';
import type { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import type { RaftTuning } from '@baton/plugin-raft/internal/driver/options.js';
import { RaftConsensus } from '@baton/plugin-raft/internal/driver/raft-consensus.js';
import { MemoryRaftStorage } from '@baton/plugin-raft/internal/storage/memory-storage.js';
import type { AppliedListener, StreamMetadataBackend, Undo } from './metadata-backend.js';

type StreamRaft = RaftConsensus<StreamMetadata, StreamCommand, StreamResult>;

/**
 * Small snapshots and short timeouts, so a run of a few virtual seconds also compacts logs,
 * catches lagging members up by snapshot, and gives up on proposals across partitions.
 */
const TUNING: Partial<RaftTuning> = {
  snapshotInterval: 16,
  snapshotRetain: 4,
  proposeTimeoutMs: 3_000,
  readTimeoutMs: 3_000,
};

/**
 * The metadata as it runs in a deployment: every stream node is a voter of one Raft group
 * (RaftConsensus on memory storage that survives the node's crash) on the simulated network.
 * The seed picks the links' drops, duplicates and delays; partitions and leader loss are cuts
 * in that network; a node's crash takes its member down with it.
 */
export class RaftMetadataBackend implements StreamMetadataBackend {
  readonly cluster: RaftSimCluster<
    StreamMetadata,
    StreamCommand,
    StreamResult,
    StreamRaft,
    MemoryRaftStorage
  >;
  readonly link: LinkConditions;

  constructor(nodes: string[], seed: number, rng: SeededRng) {
    this.link = {
      dropProbability: rng.pick([0, 0.01, 0.05]),
      duplicateProbability: rng.pick([0, 0.02]),
      minDelayMs: 1,
      maxDelayMs: rng.pick([3, 10, 25]),
    };
    this.cluster = new RaftSimCluster({
      voters: nodes,
      seed,
      link: this.link,
      machine: new StreamStateMachine(),
      factory: {
        storage: () => new MemoryRaftStorage(),
        member: (options) =>
          new RaftConsensus<StreamMetadata, StreamCommand, StreamResult>({ ...options, ...TUNING }),
      },
    });
  }

  get clock() {
    return this.cluster.clock;
  }

  connect(node: string): Promise<StreamConsensus> {
    return this.cluster.start(node);
  }

  crash(node: string): Promise<void> {
    return this.cluster.crash(node);
  }

  propose(command: StreamCommand, options?: ProposeOptions) {
    const via = this.cluster.leader() ?? [...this.cluster.members.values()][0];
    if (!via)
      return Promise.reject(new NotAppendedError('no_leader', 'every metadata member is down'));
    return via.propose(command, options);
  }

  view(): StreamMetadata {
    return this.cluster.mostApplied()?.view().state ?? emptyMetadata();
  }

  onApplied(fn: AppliedListener): void {
    this.cluster.onApplied((member, view, entry) =>
      fn(`${member.id}#${member.incarnation}`, view.state, entry),
    );
  }

  partition(node: string, rng: SeededRng): Undo | undefined {
    const others = this.cluster.voters.filter((id) => id !== node);
    // Isolated, or cut from one peer only (it still hears the group through the third).
    const fault = rng.chance(0.5)
      ? this.cluster.isolate(node)
      : this.cluster.partition([node], [rng.pick(others)]);
    return () => fault.heal();
  }

  /** A paused process: its member neither sends nor hears anything until it resumes. */
  isolate(node: string): Undo | undefined {
    const fault = this.cluster.isolate(node);
    return () => fault.heal();
  }

  loseLeader(): Undo | undefined {
    const fault = this.cluster.isolateLeader();
    return fault && (() => fault.heal());
  }

  healAll(): void {
    this.cluster.healAll();
  }

  settled(): boolean {
    const { cluster } = this;
    return (
      cluster.activeFaults().length === 0 &&
      cluster.voters.every((id) => cluster.isUp(id)) &&
      cluster.leader() !== undefined &&
      cluster.converged()
    );
  }

  advance(ms: number): Promise<void> {
    return this.cluster.clock.advanceAsync(ms);
  }

  describe(): Record<string, unknown> {
    const stats = this.cluster.network.stats();
    const dropped = Object.values(stats.dropped).reduce((a, b) => a + b, 0);
    return {
      link: this.link,
      messages: stats.sent,
      dropped,
      term: this.cluster.leader()?.leadership().term,
      applied: this.cluster.mostApplied()?.view().applied.index,
    };
  }
}
