import type { Context } from 'koa';
import { SubjectWatchers, type EventStreams } from '@baton/http';
import type { NodeId, StreamId } from './model.js';
import type { StreamNode } from './stream-node.js';

/** The event a watcher of a stream's ownership receives, at once and on every change. */
export interface OwnershipEvent {
  stream: StreamId;
  owner: NodeId;
  /** Where the owner serves (its registered address), so a client can reopen there at once. */
  address: string | null;
  epoch: number;
  state: 'open' | 'closed';
  /** The node a pending transfer moves the stream to; null when none is pending. */
  pending_target: NodeId | null;
  pending_target_address: string | null;
}

export const OWNERSHIP_EVENT = 'ownership';

/**
 * Tells clients who owns a stream before their next append is refused: each watcher gets the
 * current ownership when it connects and again whenever a pending transfer appears or goes, or
 * the owner or the epoch changes (a completed transfer, a drain's or rebalance's move, a
 * failover). Fed by the node's change notices, which name the streams an entry touched.
 */
export class OwnershipFeed {
  private readonly watchers: SubjectWatchers<OwnershipEvent>;

  constructor(
    private readonly node: StreamNode,
    streams: EventStreams,
  ) {
    this.watchers = new SubjectWatchers(streams, {
      event: OWNERSHIP_EVENT,
      eventOf: (stream) => this.eventOf(stream),
      subscribe: (changed) => node.onChange((change) => changed('everything' in change ? 'all' : change.streams)),
    });
  }

  /** The stream's ownership now; a missing stream is the caller's 404 (StreamNotFoundError). */
  async current(stream: StreamId): Promise<OwnershipEvent> {
    await this.node.describe(stream);
    return this.eventOf(stream)!;
  }

  /** Answers `ctx` with the stream's ownership feed (404 first when the stream does not exist). */
  async watch(ctx: Context, stream: StreamId): Promise<void> {
    await this.node.describe(stream);
    this.watchers.watch(ctx, stream);
  }

  private eventOf(stream: StreamId): OwnershipEvent | undefined {
    const state = this.node.metadata();
    const record = state.stream(stream);
    if (!record) return undefined;
    const transfer = state.transfer(stream);
    return {
      stream,
      owner: record.owner,
      address: state.node(record.owner)?.address ?? null,
      epoch: record.epoch,
      state: record.state,
      pending_target: transfer?.target ?? null,
      pending_target_address: transfer ? (state.node(transfer.target)?.address ?? null) : null,
    };
  }
}
