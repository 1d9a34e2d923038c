import { own, type NodeId, type PendingTransfer, type StreamMetadata } from './model.js';

/** One node as an operator sees it: capacity, what it owns, what is moving in and out. */
export interface NodeStatus {
  id: NodeId;
  address: string;
  slots: number;
  draining: boolean;
  owned: number;
  incoming: number;
  outgoing: number;
  /** Draining and owning nothing: safe to take down. */
  drained: boolean;
}

export interface DrainProgress extends NodeStatus {
  drainInFlight: number;
  /** Streams still to leave (owned, moving or not). */
  remaining: number;
}

export function nodeStatus(state: StreamMetadata, id: NodeId): NodeStatus | undefined {
  const node = own(state.nodes, id);
  if (!node) return undefined;
  let owned = 0;
  for (const stream of Object.values(state.streams)) if (stream.owner === id) owned += 1;
  let incoming = 0;
  let outgoing = 0;
  for (const t of Object.values(state.transfers)) {
    if (t.target === id) incoming += 1;
    if (t.source === id) outgoing += 1;
  }
  return {
    id,
    address: node.address,
    slots: node.slots,
    draining: node.draining,
    owned,
    incoming,
    outgoing,
    drained: node.draining && owned === 0,
  };
}

export function drainProgress(state: StreamMetadata, id: NodeId): DrainProgress | undefined {
  const status = nodeStatus(state, id);
  if (!status) return undefined;
  return { ...status, drainInFlight: state.nodes[id].drainInFlight, remaining: status.owned };
}

export function allNodeStatus(state: StreamMetadata): NodeStatus[] {
  return Object.keys(state.nodes)
    .sort()
    .map((id) => nodeStatus(state, id)!);
}

export function pendingTransfers(state: StreamMetadata): PendingTransfer[] {
  return Object.values(state.transfers).sort((a, b) => a.since - b.since || (a.stream < b.stream ? -1 : 1));
}
