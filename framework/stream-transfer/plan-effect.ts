import { labelOf, type StreamPlacement } from './labels.js';
import type { NodeId, PlannedMove } from './model.js';
import { preferScore, satisfiesRequired, spreadCounts } from './placement-rules.js';
import type { LabelEffect, NodeEffect, PlanEffect, ViolationCount } from './plan-record.js';
import type { GoalPlan } from './plan-goals.js';
import type { StreamMetadata } from './stream-metadata.js';

/**
 * What a plan is predicted to do, from the metadata it was planned on: streams per node and per
 * label value before and after, and the placement violations before and after (required labels
 * missing, preferences unmet, spread groups uneven). Costs O(nodes · labels + moves + groups
 * moved · nodes), never a walk of the streams; a prediction, since moves are checked again when
 * they start.
 */
export function planEffect(state: StreamMetadata, plan: GoalPlan): PlanEffect {
  const byNode = nodeEffects(state, plan.moves);
  return {
    byNode,
    byLabel: labelEffects(state, byNode),
    violations: violations(state, plan.moves),
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

/**
 * Violations before and after, in O(moves): the counts the metadata keeps, adjusted by the
 * streams the plan moves; the spread is judged over the groups the plan moves streams of.
 */
function violations(state: StreamMetadata, moves: readonly PlannedMove[]): PlanEffect['violations'] {
  const required: ViolationCount = { before: state.violations.required, after: state.violations.required };
  const preferences: ViolationCount = { before: state.violations.preferences, after: state.violations.preferences };
  // A group's placement as its first moved stream gives it (the spread label, the requirement).
  const groups = new Map<string, { placement: StreamPlacement; moved: [NodeId, NodeId][] }>();
  for (const move of moves) {
    const stream = state.stream(move.stream);
    const placement = stream?.placement;
    if (!stream || !placement) continue;
    const before = state.node(stream.owner);
    const after = state.node(move.target);
    if (!before || !after) continue;
    if (placement.require) required.after += Number(!satisfiesRequired(after, placement)) - Number(!satisfiesRequired(before, placement));
    if (placement.prefer) {
      const wanted = Object.keys(placement.prefer).length;
      preferences.after += Number(preferScore(after, placement) < wanted) - Number(preferScore(before, placement) < wanted);
    }
    if (placement.spread) {
      let group = groups.get(placement.spread.group);
      if (!group) groups.set(placement.spread.group, (group = { placement, moved: [] }));
      group.moved.push([before.id, after.id]);
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
