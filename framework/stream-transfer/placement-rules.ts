import { labelOf, type StreamPlacement } from './labels.js';
import { livenessOf, type NodeId, type NodeRecord } from './model.js';
import type { StreamMetadata } from './stream-metadata.js';
import type { RejectReason, StreamCommand, StreamResult } from './commands.js';

/**
 * Where a stream with a placement may go, decided inside `apply` (so every replica decides the
 * same) and by the admin API's checks. Costs O(nodes) per decision, never O(streams): the spread
 * counts come from the metadata's per-group index.
 *
 * - `require`: the owner carries every one of these labels with this value.
 * - `spread`: a stream of the group goes only where its label value ends up at most one stream
 *   above the least filled value (over the values of the nodes that could take the group), so a
 *   group spreads evenly and a lost zone takes its share only. A node without the label takes
 *   no stream of the group.
 * - `prefer`: among the nodes both allow, the one matching more preferred labels; then the
 *   least filled spread value; then the usual least loaded node.
 */

export function satisfiesRequired(node: NodeRecord, placement: StreamPlacement | undefined): boolean {
  if (!placement?.require) return true;
  return Object.entries(placement.require).every(([key, value]) => labelOf(node.labels, key) === value);
}

export function preferScore(node: NodeRecord, placement: StreamPlacement): number {
  if (!placement.prefer) return 0;
  let score = 0;
  for (const [key, value] of Object.entries(placement.prefer)) if (labelOf(node.labels, key) === value) score += 1;
  return score;
}

/**
 * Streams of the group per value of the spread label, for each value some node that could take
 * the group carries (a zone whose every node is draining or Dead receives nothing, so it does
 * not hold the others back).
 */
export function spreadCounts(state: StreamMetadata, placement: StreamPlacement): Map<string, number> {
  const spread = placement.spread!;
  const counts = new Map<string, number>();
  const valueOf = new Map<NodeId, string>();
  for (const node of state.nodeRecords()) {
    const value = labelOf(node.labels, spread.by);
    if (value === undefined) continue;
    valueOf.set(node.id, value);
    if (!node.draining && livenessOf(node) !== 'Dead' && satisfiesRequired(node, placement)) counts.set(value, 0);
  }
  for (const [node, here] of state.spreadCountsOf(spread.group)) {
    const value = valueOf.get(node);
    if (value !== undefined && counts.has(value)) counts.set(value, counts.get(value)! + here);
  }
  return counts;
}

/** A group's spread counts with their three least filled values, so one move is judged in O(1). */
interface SpreadView {
  counts: Map<string, number>;
  smallest: [string, number][];
}

/** Spread views by group, label and requirement: one plan reads an unchanging state, so it computes each once. */
export type SpreadViews = Map<string, SpreadView>;

function spreadView(state: StreamMetadata, placement: StreamPlacement, views?: SpreadViews): SpreadView {
  const key = views ? `${placement.spread!.group}\u0000${placement.spread!.by}\u0000${JSON.stringify(placement.require ?? {})}` : '';
  const known = views?.get(key);
  if (known) return known;
  const counts = spreadCounts(state, placement);
  const smallest = [...counts].sort((a, b) => a[1] - b[1]).slice(0, 3);
  const view = { counts, smallest };
  views?.set(key, view);
  return view;
}

/** How full `to`'s spread value would be after the move from `from`, or undefined when the spread forbids it. */
function spreadAfter(state: StreamMetadata, placement: StreamPlacement, view: SpreadView, from: NodeId | undefined, to: NodeRecord): number | undefined {
  const by = placement.spread!.by;
  const target = labelOf(to.labels, by);
  const counts = view.counts;
  if (target === undefined || !counts.has(target)) return undefined;
  const origin = from === undefined ? undefined : labelOf(state.node(from)?.labels, by);
  if (origin === target) return counts.get(target)!;
  const filled = counts.get(target)! + 1;
  // The least filled value after the move: the origin lost one, the target gained one, the rest stayed.
  let least = filled;
  if (origin !== undefined && counts.has(origin)) least = Math.min(least, counts.get(origin)! - 1);
  for (const [value, count] of view.smallest) {
    if (value === origin || value === target) continue;
    least = Math.min(least, count);
    break;
  }
  return filled <= least + 1 ? filled : undefined;
}

/** Whether moving (or placing, `from` undefined) a stream with this placement onto `to` respects it. */
export function placementAllows(
  state: StreamMetadata,
  placement: StreamPlacement | undefined,
  from: NodeId | undefined,
  to: NodeRecord,
  views?: SpreadViews,
): boolean {
  if (!satisfiesRequired(to, placement)) return false;
  if (!placement?.spread) return true;
  return spreadAfter(state, placement, spreadView(state, placement, views), from, to) !== undefined;
}

/**
 * The node a stream with this placement should go to (placed anew, or leaving `from`), never
 * `from` itself: undefined when no node that can take a stream respects the placement.
 */
export function chooseNode(state: StreamMetadata, placement: StreamPlacement | undefined, from?: NodeId): NodeRecord | undefined {
  if (!placement?.require && !placement?.spread && !placement?.prefer) return state.leastLoadedNode(from);
  const view = placement.spread ? spreadView(state, placement) : undefined;
  let best: { node: NodeRecord; score: number; filled: number } | undefined;
  // Best placement order first, so the first of equals is the least loaded.
  for (const node of state.placeableNodes()) {
    if (node.id === from || !satisfiesRequired(node, placement)) continue;
    const filled = view ? spreadAfter(state, placement, view, from, node) : 0;
    if (filled === undefined) continue;
    const score = preferScore(node, placement);
    if (!best || score > best.score || (score === best.score && filled < best.filled)) best = { node, score, filled };
  }
  return best?.node;
}

/**
 * Replaces a stream's placement (the `set-placement` command). Nothing moves: the answer says
 * whether the owner satisfies the new placement, and every later move respects it.
 */
export function setPlacement(
  state: StreamMetadata,
  c: Extract<StreamCommand, { type: 'set-placement' }>,
  reject: (reason: RejectReason, message: string) => StreamResult,
): StreamResult {
  const stream = state.stream(c.stream);
  if (!stream) return reject('unknown_stream', `stream ${c.stream} does not exist`);
  const placement = Object.keys(c.placement).length > 0 ? structuredClone(c.placement) : undefined;
  const { placement: _previous, ...rest } = stream;
  state.putStream(placement ? { ...rest, placement } : rest);
  const owner = state.node(stream.owner);
  return { ok: true, node: stream.owner, epoch: stream.epoch, satisfied: owner !== undefined && satisfiesRequired(owner, placement) };
}
