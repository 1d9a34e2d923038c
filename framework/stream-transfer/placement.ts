import { livenessOf, type NodeId, type NodeRecord, type PlannedMove, type StreamId } from './model.js';
import type { StreamMetadata } from './stream-metadata.js';
import { sortedTree, type SortedTree } from '@baton/consensus';
import { placementAllows, type SpreadViews } from './placement-rules.js';

/**
 * Where streams go: pure functions of the metadata, used inside `apply` (so every replica
 * decides the same) and by the admin API for dry runs. They read the metadata's indexes, so
 * none of them counts streams.
 */

/** The least loaded node that can take one more stream (see `StreamMetadata.leastLoadedNode`). */
export function leastLoadedNode(state: StreamMetadata, exclude?: NodeId): NodeRecord | undefined {
  return state.leastLoadedNode(exclude);
}

/** One node during planning: its load as the plan so far leaves it, and what it can still give. */
interface Planned {
  node: NodeRecord;
  load: number;
  movable: number;
  /** The last stream the plan took from this node (streams leave in id order). */
  cursor?: StreamId;
}

const byLoadThenId = (a: Planned, b: Planned): number => a.load - b.load || (a.node.id < b.node.id ? -1 : a.node.id > b.node.id ? 1 : 0);
const byLoadDescThenId = (a: Planned, b: Planned): number =>
  b.load - a.load || (a.node.id < b.node.id ? -1 : a.node.id > b.node.id ? 1 : 0);

/** Streams of a giver looked at for one move before it is passed over (their placements refuse the taker). */
const PLACEMENT_TRIES = 16;

/** Takers looked at for one giver (least loaded first) when placements refuse the least loaded. */
const TAKER_TRIES = 8;

/** The least loaded taker (from `first` on) that one of the giver's next streams may go to, and that stream. */
function takerFor(
  state: StreamMetadata,
  takers: SortedTree<Planned, true>,
  from: Planned,
  first: Planned,
  views: SpreadViews,
): { to: Planned; stream: StreamId } | undefined {
  const cursor = from.cursor;
  let tries = 0;
  for (let to: Planned | undefined = first; to && tries < TAKER_TRIES; to = takers.nextHigherKey(to)) {
    if (to === from) continue;
    // Takers only get heavier from here: none would narrow the gap.
    if (from.load - to.load <= 1) return undefined;
    const stream = movableTo(state, from, to.node, views);
    if (stream !== undefined) return { to, stream };
    from.cursor = cursor;
    tries += 1;
  }
  return undefined;
}

/** The next idle stream of `from` (after its cursor) whose placement lets it go to `to`. */
function movableTo(state: StreamMetadata, from: Planned, to: NodeRecord, views: SpreadViews): StreamId | undefined {
  let tries = 0;
  for (const stream of state.idleStreamsOf(from.node.id, from.cursor)) {
    if (placementAllows(state, state.stream(stream)?.placement, from.node.id, to, views)) return stream;
    // Skipped streams stay behind the cursor: this plan leaves them where they are.
    from.cursor = stream;
    if (++tries >= PLACEMENT_TRIES) return undefined;
  }
  return undefined;
}

/**
 * A plan that evens out streams per node: repeatedly move one stream from the most loaded
 * non-draining node to the least loaded one with a free slot, until no move narrows the gap.
 * Streams already transferring stay put; draining nodes are emptied by their drain, not here.
 * Costs O(nodes · log nodes) to set up, then O(log nodes + log streams) per move.
 */
export function planRebalance(state: StreamMetadata): PlannedMove[] {
  // Givers: most loaded first. Takers: least loaded first. Both hold only nodes that qualify.
  const givers = sortedTree<Planned, true>(byLoadDescThenId);
  const takers = sortedTree<Planned, true>(byLoadThenId);
  const enter = (p: Planned) => {
    if (p.movable > 0) givers.set(p, true);
    if (p.load < p.node.slots) takers.set(p, true);
  };
  const leave = (p: Planned) => {
    givers.delete(p);
    takers.delete(p);
  };
  for (const node of state.nodes()) {
    // A Dead node's streams leave by failover, and it takes none.
    if (node.draining || livenessOf(node) === 'Dead') continue;
    enter({ node, load: state.load(node.id), movable: state.idleCount(node.id) });
  }
  const moves: PlannedMove[] = [];
  // The state does not change while planning: each group's spread is read once.
  const views: SpreadViews = new Map();
  for (;;) {
    const from = givers.minKey();
    if (!from) break;
    let to = takers.minKey();
    if (to === from) to = takers.nextHigherKey(to);
    if (!to || from.load - to.load <= 1) break;
    const found = takerFor(state, takers, from, to, views);
    if (!found) {
      // Nothing this giver holds may go to any taker that would narrow the gap: it gives no more.
      leave(from);
      from.movable = 0;
      continue;
    }
    to = found.to;
    moves.push({ stream: found.stream, target: to.node.id });
    leave(from);
    leave(to);
    from.cursor = found.stream;
    from.load -= 1;
    from.movable -= 1;
    to.load += 1;
    enter(from);
    enter(to);
  }
  return moves;
}
