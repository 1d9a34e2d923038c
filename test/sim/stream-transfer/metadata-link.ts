import {
  NotAppendedError,
  OutcomeUnknownError,
  ReadUnavailableError,
  type AppliedEntry,
  type AppliedView,
  type ProposeOptions,
  type Receipt,
} from '@baton/contracts/internal/metadata-consensus.js';
import type { StreamCommand, StreamResult } from '@baton/stream-transfer/internal/commands.js';
import type { StreamMetadata } from '@baton/stream-transfer/internal/model.js';
import type { StreamConsensus } from '@baton/stream-transfer/internal/stream-node.js';
import type { LocalConsensus } from '@baton/testing/internal/fakes/local-consensus.js';
import type { SeededRng } from '@baton/conformance/internal/seeded-rng.js';

export interface LinkFaults {
  /** Probability a proposal is refused before it is appended (a dropped message). */
  dropProbability: number;
  /** Probability a proposal is applied but its answer lost (a crash or a drop after sending). */
  lostAnswerProbability: number;
}

/**
 * One node's connection to the shared metadata, with the faults a real network brings. While
 * partitioned the node keeps the view it had (a lagging follower: it applies nothing new, its
 * proposals fail); once healed it sees the current view again. Drops and lost answers are drawn
 * from the simulation's rng, so a seed replays the same faults.
 */
export class MetadataLink implements StreamConsensus {
  private frozen?: AppliedView<StreamMetadata>;
  private readonly watchers = new Set<
    (view: AppliedView<StreamMetadata>, entry: AppliedEntry<StreamCommand, StreamResult>) => void
  >();

  constructor(
    private readonly inner: LocalConsensus<StreamMetadata, StreamCommand, StreamResult>,
    private readonly rng: SeededRng,
    private readonly faults: LinkFaults,
    /** This node, and the node the backend says leads now (the one whose duties it runs). */
    private readonly self: string,
    private readonly leaderNode: () => string | undefined,
  ) {
    inner.watch((view, entry) => {
      if (this.frozen) return;
      for (const fn of [...this.watchers]) fn(view, entry);
    });
  }

  get partitioned(): boolean {
    return this.frozen !== undefined;
  }

  partition(): void {
    this.frozen ??= {
      state: this.inner.view().state.clone(),
      applied: this.inner.view().applied,
    };
  }

  /** Heals the link; returns true if it was partitioned (the node should then re-read its view). */
  heal(): boolean {
    const was = this.frozen !== undefined;
    this.frozen = undefined;
    return was;
  }

  async propose(command: StreamCommand, options?: ProposeOptions): Promise<Receipt<StreamResult>> {
    if (this.frozen)
      throw new NotAppendedError('no_leader', 'the node is partitioned from the metadata leader');
    if (this.rng.chance(this.faults.dropProbability)) {
      throw new NotAppendedError('no_leader', `simulated drop of ${command.type}`);
    }
    if (this.rng.chance(this.faults.lostAnswerProbability)) {
      await this.inner.propose(command, options).catch(() => undefined);
      throw new OutcomeUnknownError('timeout', `simulated lost answer of ${command.type}`);
    }
    return this.inner.propose(command, options);
  }

  async read(): Promise<AppliedView<StreamMetadata>> {
    if (this.frozen)
      throw new ReadUnavailableError('the node is partitioned from the metadata leader');
    return this.inner.read();
  }

  view(): AppliedView<StreamMetadata> {
    return this.frozen ?? this.inner.view();
  }

  watch(
    fn: (
      view: AppliedView<StreamMetadata>,
      entry: AppliedEntry<StreamCommand, StreamResult>,
    ) => void,
  ): () => void {
    const subscription = (
      view: AppliedView<StreamMetadata>,
      entry: AppliedEntry<StreamCommand, StreamResult>,
    ) => fn(view, entry);
    this.watchers.add(subscription);
    return () => void this.watchers.delete(subscription);
  }

  /**
   * One node at a time leads (runs the leader's duties, such as judging liveness); a node cut
   * off from the metadata knows no leader, as a Raft follower that lost its leader does.
   */
  leadership() {
    const inner = this.inner.leadership();
    if (this.frozen || !inner.isLeader) return { self: this.self, isLeader: false, term: inner.term };
    const leader = this.leaderNode();
    return { self: this.self, isLeader: leader === this.self, leader, term: inner.term };
  }

  onLeadership(fn: Parameters<StreamConsensus['onLeadership']>[0]) {
    return this.inner.onLeadership(fn);
  }

  membership() {
    return this.inner.membership();
  }

  addVoter(member: string) {
    return this.inner.addVoter(member);
  }

  removeVoter(member: string) {
    return this.inner.removeVoter(member);
  }
}
