import type { NodeId, StreamId, StreamMetadata } from './model.js';

/**
 * Where a data request for a stream belongs, seen from one node's metadata view (seed 000,
 * "During the transfer"): served here, parked here until the handoff settles, or sent
 * elsewhere with a hint naming the node that will serve it.
 */
export type Route =
  | { kind: 'missing' }
  | { kind: 'serve'; epoch: number }
  | { kind: 'park'; why: 'transfer_pending' | 'reopening' }
  | { kind: 'redirect'; owner: NodeId; address?: string; epoch: number; transferring: boolean };

export function routeRequest(state: StreamMetadata, self: NodeId, streamId: StreamId): Route {
  const stream = state.stream(streamId);
  if (!stream) return { kind: 'missing' };
  const pending = state.transfer(streamId);
  if (pending) {
    // The pending record changes routing at once: the target is where the stream is going.
    if (pending.target === self) return { kind: 'park', why: 'transfer_pending' };
    return {
      kind: 'redirect',
      owner: pending.target,
      address: state.node(pending.target)?.address,
      epoch: stream.epoch + 1,
      transferring: true,
    };
  }
  if (stream.owner !== self) {
    return {
      kind: 'redirect',
      owner: stream.owner,
      address: state.node(stream.owner)?.address,
      epoch: stream.epoch,
      transferring: false,
    };
  }
  if (stream.state === 'closed') return { kind: 'park', why: 'reopening' };
  return { kind: 'serve', epoch: stream.epoch };
}
