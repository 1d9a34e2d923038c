import type { Clock } from '../contracts/clock.js';
import type { BatonMetrics } from '../http/metrics.js';
import { consensusReadingOf } from '../http/metrics-sources.js';
import type { NodeId, StreamMetadata } from './model.js';
import type { StreamConsensus } from './stream-node.js';

/**
 * Feeds a node's metrics from the published metadata: the consensus gauges, the transfers
 * this node is handing off (in flight), and each of them once it settles, by outcome, with
 * its duration. Each transfer is counted by its source node only, so summing over the
 * cluster counts it once. Driven by the metadata diff, not by single entries, because a
 * watcher may see entries skipped; a transfer already pending when the node starts is timed
 * from then (its true start is not known to this process).
 */
export class TransferMetrics {
  /** Stream -> (target, clock time it was first seen pending) for transfers away from this node. */
  private readonly handingOff = new Map<string, { target: NodeId; seenAt: number }>();
  private unwatch?: () => void;

  constructor(
    private readonly consensus: StreamConsensus,
    private readonly metrics: BatonMetrics,
    private readonly clock: Clock,
    private readonly self: NodeId,
  ) {}

  start(): void {
    this.metrics.observeConsensus(consensusReadingOf(this.consensus));
    this.metrics.observeTransfersInFlight(() => this.handingOff.size);
    this.observe(this.consensus.view().state);
    this.unwatch = this.consensus.watch((view) => this.observe(view.state));
  }

  stop(): void {
    this.unwatch?.();
    this.unwatch = undefined;
  }

  private observe(state: StreamMetadata): void {
    const now = this.clock.now();
    for (const pending of state.transfersFrom(this.self)) {
      if (!this.handingOff.has(pending.stream)) {
        this.handingOff.set(pending.stream, { target: pending.target, seenAt: now });
      }
    }
    for (const [stream, seen] of this.handingOff) {
      if (state.transfer(stream)?.source === this.self) continue;
      this.handingOff.delete(stream);
      // Completion re-points the stream at the target; anything else means it did not move.
      const owner = state.stream(stream)?.owner;
      this.metrics.recordTransfer(owner === seen.target ? 'completed' : 'abandoned', now - seen.seenAt);
    }
  }
}

