import { sortedTree, type SortedTree } from '@baton/consensus';
import type { NodeId, StreamRecord } from './model.js';

const NONE: ReadonlyMap<NodeId, number> = new Map();

/**
 * How many streams of each spread group are on each node, or moving there: what the spread rule
 * of a placement reads (placement-rules.ts). An ordered tree of groups, each holding a small map
 * of the nodes that hold its streams; a map is replaced on change, never edited, so a clone is
 * copy on write like the metadata's other indexes, however many groups there are.
 */
export class SpreadIndex {
  private constructor(private readonly byGroup: SortedTree<string, ReadonlyMap<NodeId, number>> = sortedTree()) {}

  static empty(): SpreadIndex {
    return new SpreadIndex();
  }

  count(group: string, node: NodeId): number {
    return this.byGroup.get(group)?.get(node) ?? 0;
  }

  /** The nodes that hold (or are receiving) streams of the group, with how many. */
  countsOf(group: string): ReadonlyMap<NodeId, number> {
    return this.byGroup.get(group) ?? NONE;
  }

  /** A stream was `before` at `from` and is `after` at `to` (either side may carry no spread group). */
  move(before: StreamRecord | undefined, from: NodeId | undefined, after: StreamRecord, to: NodeId): void {
    const old = before?.placement?.spread?.group;
    const now = after.placement?.spread?.group;
    if (old === now && from === to) return;
    if (old !== undefined && from !== undefined) this.add(old, from, -1);
    if (now !== undefined) this.add(now, to, 1);
  }

  clone(): SpreadIndex {
    return new SpreadIndex(this.byGroup.clone());
  }

  private add(group: string, node: NodeId, delta: number): void {
    const counts = new Map(this.byGroup.get(group) ?? NONE);
    const count = (counts.get(node) ?? 0) + delta;
    if (count > 0) counts.set(node, count);
    else counts.delete(node);
    if (counts.size > 0) this.byGroup.set(group, counts);
    else this.byGroup.delete(group);
  }
}
