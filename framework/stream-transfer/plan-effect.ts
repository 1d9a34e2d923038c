import { labelOf, type StreamPlacement } from './labels.js';
import type { NodeId, PlannedMove, StreamId } from './model.js';
import { preferScore, satisfiesRequired, spreadCounts } from './placement-rules.js';
import type { LabelEffect, NodeEffect, PlanEffect, ViolationCount } from './plan-record.js';
import type { GoalPlan } from './plan-goals.js';
import type { StreamMetadata } from './stream-metadata.js';

/**
 * What a plan is predicted to do, from the metadata it was planned on: streams per node and per
 * label value before and after, and the placement violations before and after (required labels
 * missing, preferences unmet, spread groups uneven). Costs O(nodes · labels + moves + streams
 * with a placement); a prediction, since moves are checked again when they start.
 */
export function planEffect(state: StreamMetadata, plan: GoalPlan): PlanEffect {
  const targetOf = new Map<StreamId, NodeId>(plan.moves.map((move) => [move.stream, move.target]));
  const byNode = nodeEffects(state, plan.moves);
  return {
    byNode,
    byLabel: labelEffects(state, byNode),
    violations: violations(state, targetOf),
    unplaceable: plan.unplaceable,
    unplaceableCount: plan.unplaceableCount,
  };
}

function nodeEffects(state: StreamMetadata, moves: readonly PlannedMove[]): NodeEffect[] {
  const effects = new Map<NodeId, NodeEffect>();
  for (const node of state.nodeRecords()) {
    const load = state.load(node.id);
    effects.set(node.id, { node: node.id, before: load, after: load, out: 0, in: 0 });
  }
  for (const move of moves) {
    const source = state.stream(move.stream)?.owner;
    const from = source === undefined ? undefined : effects.get(source);
    const to = effects.get(move.target);
    if (from) {
      from.out += 1;
      from.after -= 1;
    }
    if (to) {
      to.in += 1;
      to.after += 1;
    }
  }
  return [...effects.values()];
}

function labelEffects(state: StreamMetadata, byNode: readonly NodeEffect[]): LabelEffect[] {
  const effects = new Map<string, LabelEffect>();
  for (const effect of byNode) {
    const labels = state.node(effect.node)?.labels ?? {};
    for (const label of Object.keys(labels).sort()) {
      const value = labels[label]!;
      const key = `${label}\u0000${value}`;
      const sum = effects.get(key) ?? { label, value, before: 0, after: 0 };
      sum.before += effect.before;
      sum.after += effect.after;
      effects.set(key, sum);
    }
  }
  return [...effects.values()].sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
}

function violations(state: StreamMetadata, targetOf: ReadonlyMap<StreamId, NodeId>): PlanEffect['violations'] {
  const required: ViolationCount = { before: 0, after: 0 };
  const preferences: ViolationCount = { before: 0, after: 0 };
  // A group's placement as its first stream gives it (the spread label, the requirement).
  const groups = new Map<string, { placement: StreamPlacement; moved: [NodeId, NodeId][] }>();
  for (const id of state.placedStreams()) {
    const stream = state.stream(id)!;
    const placement = stream.placement!;
    const target = targetOf.get(id);
    const before = state.node(state.transfer(id)?.target ?? stream.owner);
    const after = target === undefined ? before : state.node(target);
    if (before && !satisfiesRequired(before, placement)) required.before += 1;
    if (after && !satisfiesRequired(after, placement)) required.after += 1;
    if (placement.prefer) {
      const wanted = Object.keys(placement.prefer).length;
      if (before && preferScore(before, placement) < wanted) preferences.before += 1;
      if (after && preferScore(after, placement) < wanted) preferences.after += 1;
    }
    if (placement.spread) {
      let group = groups.get(placement.spread.group);
      if (!group) groups.set(placement.spread.group, (group = { placement, moved: [] }));
      if (target !== undefined && before) group.moved.push([before.id, target]);
    }
  }
  const spread: ViolationCount = { before: 0, after: 0 };
  for (const { placement, moved } of groups.values()) {
    const counts = spreadCounts(state, placement);
    if (uneven(counts)) spread.before += 1;
    const by = placement.spread!.by;
    for (const [from, to] of moved) {
      const origin = labelOf(state.node(from)?.labels, by);
      const destination = labelOf(state.node(to)?.labels, by);
      if (origin !== undefined && counts.has(origin)) counts.set(origin, counts.get(origin)! - 1);
      if (destination !== undefined && counts.has(destination)) counts.set(destination, counts.get(destination)! + 1);
    }
    if (uneven(counts)) spread.after += 1;
  }
  return { required, preferences, spread };
}

/** More than one stream between the fullest and the emptiest value. */
function uneven(counts: ReadonlyMap<string, number>): boolean {
  if (counts.size < 2) return false;
  const values = [...counts.values()];
  return Math.max(...values) - Math.min(...values) > 1;
}
