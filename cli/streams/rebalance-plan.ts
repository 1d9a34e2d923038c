import type { PlannedMoveFrom } from '../../framework/stream-transfer/model.js';
import { table } from '../table.js';

/**
 * A rebalance plan for a person: each move as stream: from -> to, then each node the plan
 * touches with the streams it owns now, what leaves, what arrives, and what it owns after.
 * `owned` is the streams each node owns now (from the node list).
 */
export function rebalancePlanLines(
  moves: readonly PlannedMoveFrom[],
  owned: ReadonlyMap<string, number>,
  verb: string,
): string[] {
  if (moves.length === 0) return ['the streams are balanced: nothing to move'];
  const out = new Map<string, number>();
  const into = new Map<string, number>();
  for (const move of moves) {
    if (move.source !== null) out.set(move.source, (out.get(move.source) ?? 0) + 1);
    into.set(move.target, (into.get(move.target) ?? 0) + 1);
  }
  const touched = [...new Set([...out.keys(), ...into.keys()])].sort();
  return [
    `${verb} ${moves.length} stream(s):`,
    ...moves.map((m) => `  ${m.stream}: ${m.source ?? '(gone)'} -> ${m.target}`),
    '',
    ...table(
      ['NODE', 'NOW', 'OUT', 'IN', 'AFTER'],
      touched.map((node) => {
        const now = owned.get(node) ?? 0;
        const leaving = out.get(node) ?? 0;
        const arriving = into.get(node) ?? 0;
        return [node, String(now), String(leaving), String(arriving), String(now - leaving + arriving)];
      }),
    ),
  ];
}
