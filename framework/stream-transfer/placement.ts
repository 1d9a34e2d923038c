import { own, type NodeId, type NodeRecord, type PlannedMove, type StreamId, type StreamMetadata } from './model.js';

/**
 * Where streams go: pure functions of the metadata, used inside `apply` (so every replica
 * decides the same) and by the admin API for dry runs.
 */

/** Streams each node owns or is about to receive; a stream leaving a node still counts there. */
export function loadByNode(state: StreamMetadata): Map<NodeId, number> {
  const load = new Map<NodeId, number>();
  for (const id of Object.keys(state.nodes)) load.set(id, 0);
  for (const stream of Object.values(state.streams)) {
    load.set(stream.owner, (load.get(stream.owner) ?? 0) + 1);
  }
  for (const transfer of Object.values(state.transfers)) {
    load.set(transfer.target, (load.get(transfer.target) ?? 0) + 1);
  }
  return load;
}

export function hasFreeSlot(node: NodeRecord, load: Map<NodeId, number>): boolean {
  return (load.get(node.id) ?? 0) < node.slots;
}

/**
 * The least loaded node that can take one more stream: not draining, not excluded, with a free
 * slot; lowest fill ratio first, then fewest streams, then id (so replicas agree).
 */
export function leastLoadedNode(
  state: StreamMetadata,
  load: Map<NodeId, number>,
  exclude?: NodeId,
): NodeRecord | undefined {
  let best: NodeRecord | undefined;
  for (const node of Object.values(state.nodes)) {
    if (node.draining || node.id === exclude || !hasFreeSlot(node, load)) continue;
    if (!best || compareLoad(node, best, load) < 0) best = node;
  }
  return best;
}

function compareLoad(a: NodeRecord, b: NodeRecord, load: Map<NodeId, number>): number {
  const la = load.get(a.id) ?? 0;
  const lb = load.get(b.id) ?? 0;
  const ratio = la / a.slots - lb / b.slots;
  if (ratio !== 0) return ratio;
  if (la !== lb) return la - lb;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * A plan that evens out streams per node: repeatedly move one stream from the most loaded
 * non-draining node to the least loaded one with a free slot, until no move narrows the gap.
 * Streams already transferring stay put; draining nodes are emptied by their drain, not here.
 */
export function planRebalance(state: StreamMetadata): PlannedMove[] {
  const load = loadByNode(state);
  const movable = new Map<NodeId, StreamId[]>();
  for (const stream of Object.values(state.streams).sort((a, b) => (a.id < b.id ? -1 : 1))) {
    if (own(state.transfers, stream.id)) continue;
    const list = movable.get(stream.owner) ?? [];
    list.push(stream.id);
    movable.set(stream.owner, list);
  }
  const active = Object.values(state.nodes)
    .filter((n) => !n.draining)
    .sort((a, b) => (a.id < b.id ? -1 : 1));
  const moves: PlannedMove[] = [];
  for (;;) {
    let from: NodeRecord | undefined;
    for (const node of active) {
      if ((movable.get(node.id)?.length ?? 0) === 0) continue;
      if (!from || (load.get(node.id) ?? 0) > (load.get(from.id) ?? 0)) from = node;
    }
    if (!from) break;
    let to: NodeRecord | undefined;
    for (const node of active) {
      if (node.id === from.id || !hasFreeSlot(node, load)) continue;
      if (!to || (load.get(node.id) ?? 0) < (load.get(to.id) ?? 0)) to = node;
    }
    if (!to || (load.get(from.id) ?? 0) - (load.get(to.id) ?? 0) <= 1) break;
    const stream = movable.get(from.id)!.shift()!;
    moves.push({ stream, target: to.id });
    load.set(from.id, (load.get(from.id) ?? 0) - 1);
    load.set(to.id, (load.get(to.id) ?? 0) + 1);
  }
  return moves;
}
