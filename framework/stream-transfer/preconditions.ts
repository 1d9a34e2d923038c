import type { StreamCommand, StreamResult } from './commands.js';
import type { NodeId, StreamRecord } from './model.js';
import type { StreamMetadata } from './stream-metadata.js';

/**
 * An operator's "only if it is still where I saw it" (issue: expected-owner checks on moves).
 * The checks run inside apply, where the move itself is decided, so two operators racing on one
 * stream or node cannot both pass a check made on a view that one of them is about to change:
 * the log orders their commands and the second one meets the state the first one left.
 *
 * A stream's version is its epoch (its ETag, `"<epoch>"`), with its owner; a node's version is
 * the number of streams it owns (the ETag of GET /v1/admin/nodes/{node}), what a drain or a
 * failover is about to move. A count can come back to the same value after moves in and out;
 * what it guards against is moving a node's streams after they changed in number, the mistake
 * an operator acting on a stale listing makes.
 */

type TransferCommand = Extract<StreamCommand, { type: 'transfer' }>;
type NodeCommand = Extract<StreamCommand, { type: 'drain' | 'failover' }>;

/** The refusal of a transfer whose expected owner or epoch no longer holds, if it does not. */
export function transferPrecondition(stream: StreamRecord, c: TransferCommand): StreamResult | undefined {
  const ownerMoved = c.expectedOwner !== undefined && c.expectedOwner !== stream.owner;
  const epochMoved = c.expectedEpoch !== undefined && c.expectedEpoch !== stream.epoch;
  if (!ownerMoved && !epochMoved) return undefined;
  const expected = [
    ...(c.expectedOwner !== undefined ? [`owner ${c.expectedOwner}`] : []),
    ...(c.expectedEpoch !== undefined ? [`epoch ${c.expectedEpoch}`] : []),
  ].join(' and ');
  return {
    ok: false,
    reason: 'precondition_failed',
    message: `stream ${stream.id} is owned by ${stream.owner} at epoch ${stream.epoch}, not ${expected} as expected: nothing moved; look again before moving it`,
    current: { stream: stream.id, owner: stream.owner, epoch: stream.epoch },
  };
}

/** The refusal of a drain or failover of a node whose stream count changed, if it did. */
export function nodePrecondition(state: StreamMetadata, node: NodeId, c: NodeCommand): StreamResult | undefined {
  if (c.expectedStreams === undefined) return undefined;
  const streams = state.ownedCount(node);
  if (streams === c.expectedStreams) return undefined;
  return {
    ok: false,
    reason: 'precondition_failed',
    message: `node ${node} owns ${streams} streams, not ${c.expectedStreams} as expected: nothing changed; look again before the ${c.type}`,
    current: { node, streams },
  };
}
