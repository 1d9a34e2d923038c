import type { PlanPreview } from '@baton/stream-transfer';
import { table } from '../table.js';

/**
 * A rebalance plan for a person: each move the answer shows as stream: from -> to (its first
 * ones when the plan is large), then each node the plan touches with the streams it owns now,
 * what leaves, what arrives, and what it owns after (from the whole plan's per-node effect).
 * `owned` is the streams each node owns now (from the node list).
 */
export function rebalancePlanLines(plan: PlanPreview, owned: ReadonlyMap<string, number>, verb: string): string[] {
  if (plan.planned === 0) return ['the streams are balanced: nothing to move'];
  return [
    `${verb} ${plan.planned} stream(s):`,
    ...plan.moves.map((m) => `  ${m.stream}: ${m.source ?? '(gone)'} -> ${m.target}`),
    ...(plan.planned > plan.moves.length ? [`  ... and ${plan.planned - plan.moves.length} more`] : []),
    '',
    ...table(
      ['NODE', 'NOW', 'OUT', 'IN', 'AFTER'],
      plan.byNode.map(({ node, out, in: arriving }) => {
        const now = owned.get(node) ?? 0;
        return [node, String(now), String(out), String(arriving), String(now - out + arriving)];
      }),
    ),
  ];
}
