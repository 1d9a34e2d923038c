import type { PlannedMove, PlannedMoveFrom, StreamMetadata } from './model.js';

/**
 * What a rebalance's answer shows, computed from the metadata alone (no HTTP, no zod), so the
 * state machine can put it in the rebalance's result and a retry under the same Idempotency-Key
 * answers what the first request was answered. A plan can hold a move per stream, so no answer
 * carries it whole: a plan or a start shows its first moves and its size, and the waiting queue
 * is read in pages by plan position.
 */
export const MOVES_SHOWN = 100; // as many as a page of the queue shows by default (DEFAULT_PAGE_LIMIT)

/** A planned move with its place in the plan (the cursor of the queue's pages). */
export interface QueuedMove extends PlannedMove {
  position: number;
}

/** The rebalance as the admin API shows it: tallies, and one page of the moves not started yet. */
export interface RebalancePage {
  planned: number;
  started: number;
  skipped: number;
  maxInFlight: number;
  /** Moves not started yet (all of them, not only this page's). */
  waiting: number;
  queue: QueuedMove[];
  /** The `after` of the next page of the queue, or null when this one is the last. */
  next: string | null;
}

/** One page of the waiting moves after plan position `after`: O(limit), never a copy of the queue. */
export function rebalancePage(state: StreamMetadata, after: string | undefined, size: number): RebalancePage {
  const parts = state.rebalanceParts();
  if (!parts) return { planned: 0, started: 0, skipped: 0, maxInFlight: 0, waiting: 0, queue: [], next: null };
  const waiting = parts.moves.length - parts.next;
  // Moves before `taken` (in plan positions) were started or skipped.
  const taken = parts.tallies.planned - waiting;
  const from = Math.max(taken, after === undefined ? 0 : Number(after) + 1);
  const end = Math.min(parts.tallies.planned, from + size);
  const queue: QueuedMove[] = [];
  for (let position = from; position < end; position++) {
    const move = parts.moves[parts.next + position - taken];
    queue.push({ stream: move.stream, target: move.target, position });
  }
  return { ...parts.tallies, waiting, queue, next: end < parts.tallies.planned ? String(end - 1) : null };
}

/** What a plan does to one node, over the whole plan. */
export interface PlanNodeEffect {
  node: string;
  out: number;
  in: number;
}

/** A plan as an answer shows it: its size, its first moves (with the node each leaves), and per node what leaves and arrives. */
export interface PlanPreview {
  planned: number;
  moves: PlannedMoveFrom[];
  /** More moves are planned than `moves` shows. */
  truncated: boolean;
  /** Every node the plan touches, by id: bounded by the nodes, not by the plan. */
  byNode: PlanNodeEffect[];
}

/**
 * The preview of `moves` against `state`: one lookup per move (the node it leaves is the
 * stream's owner), O(moves · log n) like the planning itself, and an answer of bounded size.
 */
export function planPreview(state: StreamMetadata, moves: readonly PlannedMove[]): PlanPreview {
  const effects = new Map<string, PlanNodeEffect>();
  const of = (node: string) => {
    let effect = effects.get(node);
    if (!effect) effects.set(node, (effect = { node, out: 0, in: 0 }));
    return effect;
  };
  const shown: PlannedMoveFrom[] = [];
  for (const move of moves) {
    const source = state.stream(move.stream)?.owner ?? null;
    if (source !== null) of(source).out += 1;
    of(move.target).in += 1;
    if (shown.length < MOVES_SHOWN) shown.push({ ...move, source });
  }
  const byNode = [...effects.values()].sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
  return { planned: moves.length, moves: shown, truncated: moves.length > MOVES_SHOWN, byNode };
}
