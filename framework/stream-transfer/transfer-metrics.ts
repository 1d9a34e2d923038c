import type { Clock } from '@baton/contracts';
import { type BatonMetrics, consensusReadingOf } from '@baton/http';
import { streamsTouchedBy } from './changed-streams.js';
import type { NodeId, StreamId, StreamMetadata } from './model.js';
import type { StreamConsensus } from './stream-node.js';

/**
 * Feeds a node's metrics from the published metadata: the consensus gauges, the transfers
 * this node is handing off (in flight), and each of them once it settles, by outcome, with
 * its duration. Each transfer is counted by its source node only, so summing over the
 * cluster counts it once. Driven by the streams each applied entry touched; when entries were
 * skipped (the index jumped) it compares the whole set of transfers from this node instead. A
 * transfer already pending when the node starts is timed from then (its true start is not known
 * to this process).
 */
export class TransferMetrics {
  /** Stream -> (target, clock time it was first seen pending) for transfers away from this node. */
  private readonly handingOff = new Map<string, { target: NodeId; seenAt: number }>();
  private unwatch?: () => void;
  private lastSeen = 0;

  constructor(
    private readonly consensus: StreamConsensus,
    private readonly metrics: BatonMetrics,
    private readonly clock: Clock,
    private readonly self: NodeId,
  ) {}

  start(): void {
    this.metrics.observeConsensus(consensusReadingOf(this.consensus));
    this.metrics.observeTransfersInFlight(() => this.handingOff.size);
    const view = this.consensus.view();
    this.lastSeen = view.applied.index;
    this.observeAll(view.state);
    this.unwatch = this.consensus.watch((current, entry) => {
      const contiguous = entry.position.index === this.lastSeen + 1;
      this.lastSeen = entry.position.index;
      if (!contiguous) return this.observeAll(current.state);
      for (const stream of streamsTouchedBy(entry)) this.observeStream(current.state, stream);
    });
  }

  stop(): void {
    this.unwatch?.();
    this.unwatch = undefined;
  }

  private observeAll(state: StreamMetadata): void {
    for (const pending of state.transfersFrom(this.self)) this.observeStream(state, pending.stream);
    for (const stream of [...this.handingOff.keys()]) this.observeStream(state, stream);
  }

  private observeStream(state: StreamMetadata, stream: StreamId): void {
    const pending = state.transfer(stream);
    const seen = this.handingOff.get(stream);
    if (pending?.source === this.self) {
      if (!seen) this.handingOff.set(stream, { target: pending.target, seenAt: this.clock.now() });
      return;
    }
    if (!seen) return;
    this.handingOff.delete(stream);
    // Completion re-points the stream at the target; anything else means it did not move.
    const owner = state.stream(stream)?.owner;
    this.metrics.recordTransfer(owner === seen.target ? 'completed' : 'abandoned', this.clock.now() - seen.seenAt, { name: stream, source: this.self, target: seen.target });
  }
}
