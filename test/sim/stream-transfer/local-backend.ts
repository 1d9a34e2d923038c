import type { ProposeOptions } from '@baton/contracts/internal/metadata-consensus.js';
import type { StreamCommand, StreamResult } from '@baton/stream-transfer/internal/commands.js';
import type { StreamMetadata } from '@baton/stream-transfer/internal/model.js';
import { StreamStateMachine } from '@baton/stream-transfer/internal/state-machine.js';
import type { StreamConsensus } from '@baton/stream-transfer/internal/stream-node.js';
import { LocalConsensus } from '@baton/testing/internal/fakes/local-consensus.js';
import type { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';
import type { AppliedListener, StreamMetadataBackend, Undo } from './metadata-backend.js';
import { MetadataLink } from './metadata-link.js';

/**
 * The metadata as one fault-injecting log (LocalConsensus) that every node reaches through a
 * MetadataLink: dropped proposals, lost answers, frozen views while partitioned, and leader
 * loss as a flag. Replication itself is not simulated; the Raft backend does that.
 */
export class LocalMetadataBackend implements StreamMetadataBackend {
  readonly clock = new VirtualClock();
  readonly consensus = new LocalConsensus<StreamMetadata, StreamCommand, StreamResult>(
    new StreamStateMachine(),
  );
  private readonly links = new Map<string, MetadataLink>();
  /** Nodes whose process is down: they lead nothing. */
  private readonly down = new Set<string>();

  constructor(private readonly rng: SeededRng) {}

  /** A node keeps its link across restarts, as it keeps its network address. */
  async connect(node: string): Promise<StreamConsensus> {
    this.down.delete(node);
    let link = this.links.get(node);
    if (!link) {
      link = new MetadataLink(
        this.consensus,
        this.rng.fork(node),
        { dropProbability: 0.02, lostAnswerProbability: 0.02 },
        node,
        () => this.leaderNode(),
      );
      this.links.set(node, link);
    }
    return link;
  }

  async crash(node: string): Promise<void> {
    this.down.add(node);
  }

  /** The first node (in start order) that is up and in touch leads: leadership moves on faults. */
  private leaderNode(): string | undefined {
    for (const [node, link] of this.links) if (!this.down.has(node) && !link.partitioned) return node;
    return undefined;
  }

  /** A paused process is cut off as a partition would cut it off. */
  isolate(node: string): Undo | undefined {
    return this.partition(node);
  }

  propose(command: StreamCommand, options?: ProposeOptions) {
    return this.consensus.propose(command, options);
  }

  view(): StreamMetadata {
    return this.consensus.view().state;
  }

  onApplied(fn: AppliedListener): void {
    this.consensus.watch((view, entry) => fn('log', view.state, entry));
  }

  partition(node: string): Undo | undefined {
    const link = this.links.get(node);
    if (!link || link.partitioned) return undefined;
    link.partition();
    return () => link.heal();
  }

  loseLeader(): Undo | undefined {
    if (!this.consensus.leadership().isLeader) return undefined;
    this.consensus.setLeadership({ isLeader: false });
    return () => this.consensus.setLeadership({ isLeader: true });
  }

  healAll(): void {
    if (!this.consensus.leadership().isLeader) this.consensus.setLeadership({ isLeader: true });
    for (const link of this.links.values()) link.heal();
  }

  settled(): boolean {
    return (
      this.consensus.leadership().isLeader && [...this.links.values()].every((l) => !l.partitioned)
    );
  }

  async advance(ms: number): Promise<void> {
    this.clock.advance(ms);
  }

  describe(): Record<string, unknown> {
    return {};
  }
}
