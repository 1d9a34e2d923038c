import { SYSTEM_ACTORS, type AuditSeal } from './audit-trail.js';
import type { StreamCommand, StreamResult } from './commands.js';
import { livenessOf, type NodeId, type StreamId } from './model.js';
import { chooseNode, placementAllows } from './placement-rules.js';
import type { StreamMetadata } from './stream-metadata.js';

/**
 * The apply rules of lost nodes: liveness changes and failover. Pure functions of the state and
 * the command, called by the StreamStateMachine; rejections are results, never throws.
 */

type Reject = (reason: 'unknown_node' | 'node_not_dead', message: string) => StreamResult;

/**
 * Records the liveness the metadata leader saw. A node turning Dead gives up the transfers
 * aimed at it: they are cancelled (the source keeps the stream and reopens it if it already
 * closed), so no pending transfer waits on a node that may never return; a drain then starts
 * new ones towards live nodes.
 */
export function applyNodeLiveness(
  state: StreamMetadata,
  c: Extract<StreamCommand, { type: 'node-liveness' }>,
  reject: Reject,
  seal: AuditSeal,
): StreamResult {
  const node = state.node(c.node);
  if (!node) return reject('unknown_node', `node ${c.node} is not registered`);
  const before = livenessOf(node);
  if (before === c.liveness) return { ok: true, duplicate: true, node: node.id };
  state.putNode({ ...node, liveness: c.liveness });
  const verdict = seal.seal({
    kind: 'node_liveness',
    subject_type: 'node',
    subject: node.id,
    actor: c.actor ?? SYSTEM_ACTORS.liveness,
    reason: `${before} -> ${c.liveness}`,
    ...(c.evidence !== undefined ? { evidence: c.evidence } : {}),
  });
  const changed = c.liveness === 'Dead' ? cancelTransfersTo(state, c.node, seal, verdict, c.actor ?? SYSTEM_ACTORS.liveness) : [];
  return { ok: true, node: node.id, ...(changed.length > 0 ? { changed } : {}) };
}

/**
 * Failover (the emergency path beside the planned handoff): every stream the node owns goes to
 * a live node with a free slot at the next epoch, marked as a takeover so its new owner finds
 * the tail in the object store and fences the old owner there before serving. A pending
 * transfer from the node goes to its own target when that one is alive (its slot is already
 * reserved there); transfers to the node are cancelled. Streams for which no node has a free
 * slot stay where they are and are counted as `remaining`; the command can simply be repeated.
 * Costs O(log n) per stream of the node (it reads the node's own index, never all streams).
 */
export function applyFailover(
  state: StreamMetadata,
  c: Extract<StreamCommand, { type: 'failover' }>,
  reject: Reject,
  seal: AuditSeal,
): StreamResult {
  const node = state.node(c.node);
  if (!node) return reject('unknown_node', `node ${c.node} is not registered`);
  const liveness = livenessOf(node);
  if (liveness !== 'Dead' && !c.force) {
    return reject(
      'node_not_dead',
      `node ${c.node} is ${liveness}: a failover takes its streams without its close, so it needs a Dead node; use a drain, or force it`,
    );
  }
  const actor = c.actor ?? SYSTEM_ACTORS.liveness;
  // The failover's own record first, so the records of what it moved can name it as cause; a
  // failover that finds nothing to move is a duplicate and seals nothing (see the end).
  const failoverId = seal.nextId;
  const hasWork = state.ownedCount(c.node) > 0 || state.incomingCount(c.node) > 0;
  if (hasWork) {
    seal.seal({
      kind: 'node_failover',
      subject_type: 'node',
      subject: c.node,
      from: c.node,
      actor,
      reason: c.force ? `forced while the node was ${liveness}` : 'the node is Dead',
      evidence: c.evidence ?? `node ${c.node} published ${liveness}`,
    });
  }
  const changed = cancelTransfersTo(state, c.node, seal, failoverId, actor);
  let moved = 0;
  let remaining = 0;
  const unplaceable: StreamId[] = [];
  // Materialised first: re-pointing a stream takes it out of the index being walked.
  for (const stream of [...state.streamsOwnedBy(c.node)]) {
    const pending = state.removeTransfer(stream.id);
    const reserved = pending ? state.node(pending.target) : undefined;
    // A forced failover of a live node must not give the streams back to it; a stream goes only
    // where its placement allows, or stays (and is named) when no node does.
    const target =
      reserved && livenessOf(reserved) !== 'Dead' && reserved.id !== c.node && placementAllows(state, stream.placement, c.node, reserved)
        ? reserved
        : chooseNode(state, stream.placement, c.node);
    if (!target || target.id === c.node) {
      remaining += 1;
      if (stream.placement && unplaceable.length < MAX_NAMED_UNPLACEABLE && chooseNode(state, undefined, c.node)) unplaceable.push(stream.id);
      continue;
    }
    state.putStream({ ...stream, owner: target.id, epoch: stream.epoch + 1, state: 'open', takeover: { from: c.node, epoch: stream.epoch, ...(hasWork ? { cause: failoverId } : {}) } });
    seal.seal({
      kind: 'stream_failed_over',
      subject_type: 'stream',
      subject: stream.id,
      from: c.node,
      to: target.id,
      epoch_before: stream.epoch,
      epoch_after: stream.epoch + 1,
      actor,
      reason: pending ? `taken without ${c.node}'s close (it was transferring to ${pending.target})` : `taken without ${c.node}'s close`,
      cause: failoverId,
    });
    changed.push(stream.id);
    moved += 1;
  }
  const details = { node: c.node, moved, remaining, ...(changed.length > 0 ? { changed } : {}), ...(unplaceable.length > 0 ? { unplaceable } : {}) };
  // Transfers towards it cancelled are a change too: the queues they held a place in move on.
  return moved === 0 && remaining === 0 && changed.length === 0 ? { ok: true, duplicate: true, ...details } : { ok: true, ...details };
}

/** Streams a failover names as left behind for their placement (the count is in `remaining`). */
const MAX_NAMED_UNPLACEABLE = 100;

/** Cancels the transfers towards `node`, sealing one record each, caused by `cause`. */
function cancelTransfersTo(state: StreamMetadata, node: NodeId, seal: AuditSeal, cause: string, actor: string): StreamId[] {
  const cancelled = [...state.transfersTo(node)];
  for (const transfer of cancelled) {
    state.removeTransfer(transfer.stream);
    seal.seal({
      kind: 'transfer_cancelled',
      subject_type: 'stream',
      subject: transfer.stream,
      from: transfer.source,
      to: transfer.target,
      epoch_before: transfer.epoch,
      epoch_after: transfer.epoch,
      actor,
      reason: `the target ${node} is Dead; ${transfer.source} keeps the stream`,
      cause,
    });
  }
  return cancelled.map((t) => t.stream);
}
