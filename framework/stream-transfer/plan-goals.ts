import { sortedTree } from '@baton/consensus';
import type { StreamPlacement } from './labels.js';
import { livenessOf, type NodeId, type NodeRecord, type PlannedMove, type StreamId } from './model.js';
import { planRebalance } from './placement.js';
import { placementAllows, preferScore, satisfiesRequired, type SpreadViews } from './placement-rules.js';
import type { PlanGoal } from './plan-record.js';
import type { StreamMetadata } from './stream-metadata.js';

/**
 * The moves a plan's goal needs, planned inside `apply` from the metadata alone (every member
 * plans the same). Costs O(moves · log nodes), plus O(streams with a placement) for
 * `restore-preferences`: never a walk of every stream.
 */
export interface GoalPlan {
  moves: PlannedMove[];
  /** Streams the goal would move that no node can take as their placement asks (at most UNPLACEABLE_NAMED). */
  unplaceable: StreamId[];
  unplaceableCount: number;
}

export const UNPLACEABLE_NAMED = 100;
/** Moves one plan holds at most (a plan is replicated, and kept until executed). */
export const MAX_PLAN_MOVES = 100_000;
/** Takers looked at for one stream, least filled first, before every taker is looked at. */
const TAKER_TRIES = 16;

export function planGoal(state: StreamMetadata, goal: PlanGoal): GoalPlan {
  switch (goal.type) {
    case 'rebalance':
      return { moves: planRebalance(state).slice(0, MAX_PLAN_MOVES), unplaceable: [], unplaceableCount: 0 };
    case 'drain':
      return planDrain(state, goal.nodes);
    case 'restore-preferences':
      return planRestorePreferences(state);
  }
}

/** A node as the plan so far leaves it. */
interface Taker {
  node: NodeRecord;
  load: number;
}

const byFillThenId = (a: Taker, b: Taker): number =>
  a.load * b.node.slots - b.load * a.node.slots || a.load - b.load || (a.node.id < b.node.id ? -1 : a.node.id > b.node.id ? 1 : 0);

/** Nodes that can take streams now (not draining, not Dead, a free slot), minus `excluded`. */
function takersOf(state: StreamMetadata, excluded: ReadonlySet<NodeId>): Taker[] {
  const takers: Taker[] = [];
  for (const node of state.nodeRecords()) {
    if (excluded.has(node.id) || node.draining || livenessOf(node) === 'Dead') continue;
    const load = state.load(node.id);
    if (load < node.slots) takers.push({ node, load });
  }
  return takers;
}

class Unplaceable {
  readonly named: StreamId[] = [];
  count = 0;
  add(stream: StreamId): void {
    this.count += 1;
    if (this.named.length < UNPLACEABLE_NAMED) this.named.push(stream);
  }
}

/**
 * Every idle stream of `nodes` to the least filled other node its placement allows (preferred
 * labels first among the few least filled), as a drain would move them, but planned whole.
 */
function planDrain(state: StreamMetadata, nodes: readonly NodeId[]): GoalPlan {
  const draining = new Set(nodes);
  const tree = sortedTree<Taker, true>(byFillThenId);
  for (const taker of takersOf(state, draining)) tree.set(taker, true);
  const views: SpreadViews = new Map();
  const moves: PlannedMove[] = [];
  const unplaceable = new Unplaceable();
  for (const from of [...draining].sort()) {
    for (const stream of state.idleStreamsOf(from)) {
      if (moves.length >= MAX_PLAN_MOVES) break;
      const placement = state.stream(stream)?.placement;
      const to = bestTaker(state, tree, placement, from, views);
      if (!to) {
        unplaceable.add(stream);
        continue;
      }
      moves.push({ stream, target: to.node.id });
      tree.delete(to);
      to.load += 1;
      if (to.load < to.node.slots) tree.set(to, true);
    }
  }
  return { moves, unplaceable: unplaceable.named, unplaceableCount: unplaceable.count };
}

/** Among the least filled takers the placement allows, the one matching the most preferred labels. */
function bestTaker(state: StreamMetadata, tree: ReturnType<typeof sortedTree<Taker, true>>, placement: StreamPlacement | undefined, from: NodeId, views: SpreadViews): Taker | undefined {
  let best: { taker: Taker; score: number } | undefined;
  let tries = 0;
  for (let taker = tree.minKey(); taker; taker = tree.nextHigherKey(taker)) {
    if (!placementAllows(state, placement, from, taker.node, views)) continue;
    const score = placement ? preferScore(taker.node, placement) : 0;
    if (!best || score > best.score) best = { taker, score };
    // Without preferences the first allowed is the least filled; with them, a few are compared.
    if (!placement?.prefer || ++tries >= TAKER_TRIES) break;
  }
  return best?.taker;
}

/**
 * Streams whose owner lacks one of their preferred labels, each to the least filled node that
 * matches more of them (and satisfies the requirement and the spread). Nodes are ranked once per
 * distinct placement, so the cost is O(streams with unmet preferences · a few nodes).
 */
function planRestorePreferences(state: StreamMetadata): GoalPlan {
  const takers = takersOf(state, new Set());
  const byId = new Map(takers.map((taker) => [taker.node.id, taker]));
  const ranked = new Map<string, { taker: Taker; score: number }[]>();
  const views: SpreadViews = new Map();
  const moves: PlannedMove[] = [];
  const unplaceable = new Unplaceable();
  for (const id of state.violations.unmetPreferences()) {
    if (moves.length >= MAX_PLAN_MOVES) break;
    const stream = state.stream(id)!;
    const placement = stream.placement!;
    if (!placement.prefer || state.transfer(id)) continue;
    const owner = state.node(stream.owner);
    const wanted = Object.keys(placement.prefer).length;
    const current = owner ? preferScore(owner, placement) : 0;
    if (current >= wanted) continue;
    const key = JSON.stringify([placement.require ?? {}, placement.prefer]);
    let candidates = ranked.get(key);
    if (!candidates) {
      candidates = takers
        .filter((taker) => satisfiesRequired(taker.node, placement))
        .map((taker) => ({ taker, score: preferScore(taker.node, placement) }))
        .filter((c) => c.score > 0)
        .sort((a, b) => b.score - a.score || byFillThenId(a.taker, b.taker));
      ranked.set(key, candidates);
    }
    // The best score with room wins; among a few of that score, the least filled node.
    let chosen: Taker | undefined;
    let chosenScore = 0;
    let looked = 0;
    for (const { taker, score } of candidates) {
      if (score <= current) break;
      if (chosen && (score < chosenScore || ++looked >= TAKER_TRIES)) break;
      if (taker.node.id === stream.owner || taker.load >= taker.node.slots) continue;
      if (!placementAllows(state, placement, stream.owner, taker.node, views)) continue;
      if (!chosen || byFillThenId(taker, chosen) < 0) {
        chosen = taker;
        chosenScore = score;
      }
    }
    if (!chosen) {
      if (candidates.some((c) => c.score > current)) unplaceable.add(id);
      continue;
    }
    moves.push({ stream: id, target: chosen.node.id });
    chosen.load += 1;
    const source = byId.get(stream.owner);
    if (source) source.load -= 1;
  }
  return { moves, unplaceable: unplaceable.named, unplaceableCount: unplaceable.count };
}
