import type { Labels } from './labels.js';
import { livenessOf, type NodeId, type NodeLiveness, type PendingTransfer, type StreamMetadata } from './model.js';

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
  /** Alive / Suspect / Dead, as the metadata leader published it. */
  liveness: NodeLiveness;
  /**
   * Milliseconds since the node's last lease renewal, as seen by the member that observes
   * liveness (the metadata leader); null on other members, or before a renewal was seen, and
   * in the answer of a drain, undrain or failover (the node as the state machine decided it).
   */
  lastRenewalMsAgo: number | null;
  /** What placements match against; `{}` when the node carries none. */
  labels: Labels;
  /** Its maintenance window, scheduled or under way (times in ISO 8601); null when none. */
  maintenance: { start: string; end: string; movesPerSecond: number; active: boolean } | null;
  /** Its window is over and streams are being handed back to it. */
  returning: boolean;
}

export interface DrainProgress extends NodeStatus {
  drainInFlight: number;
  /** Streams still to leave (owned, moving or not). */
  remaining: number;
}

/** How long ago a node last renewed its lease, when the answering member knows. */
export type RenewalAge = (node: NodeId) => number | null;

const UNKNOWN_AGE: RenewalAge = () => null;

export function nodeStatus(state: StreamMetadata, id: NodeId, renewalAge: RenewalAge = UNKNOWN_AGE): NodeStatus | undefined {
  const node = state.node(id);
  if (!node) return undefined;
  const owned = state.ownedCount(id);
  return {
    id,
    address: node.address,
    slots: node.slots,
    draining: node.draining,
    owned,
    incoming: state.incomingCount(id),
    outgoing: state.outgoingCount(id),
    drained: node.draining && owned === 0,
    liveness: livenessOf(node),
    lastRenewalMsAgo: renewalAge(id),
    labels: { ...node.labels },
    maintenance: node.maintenance
      ? {
          start: new Date(node.maintenance.startAt).toISOString(),
          end: new Date(node.maintenance.endAt).toISOString(),
          movesPerSecond: node.maintenance.movesPerSecond,
          active: node.maintenance.active,
        }
      : null,
    returning: node.returning !== undefined,
  };
}

export function drainProgress(state: StreamMetadata, id: NodeId, renewalAge: RenewalAge = UNKNOWN_AGE): DrainProgress | undefined {
  const status = nodeStatus(state, id, renewalAge);
  if (!status) return undefined;
  return { ...status, drainInFlight: state.node(id)!.drainInFlight, remaining: status.owned };
}

/** Every node's status by id (strictly after `after` when given), computed as it is read. */
export function* allNodeStatus(state: StreamMetadata, after?: NodeId, renewalAge: RenewalAge = UNKNOWN_AGE): IterableIterator<NodeStatus> {
  for (const node of state.nodes(after)) yield nodeStatus(state, node.id, renewalAge)!;
}

/** Pending transfers, oldest first, at most `limit` of them. */
export function pendingTransfers(state: StreamMetadata, limit = Number.POSITIVE_INFINITY): PendingTransfer[] {
  const oldest: PendingTransfer[] = [];
  for (const transfer of state.transfersBySince()) {
    if (oldest.length >= limit) break;
    oldest.push(transfer);
  }
  return oldest;
}
