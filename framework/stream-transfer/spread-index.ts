import { sortedTree, type SortedTree } from '@baton/consensus';
import type { NodeId, StreamRecord } from './model.js';

/**
 * How many streams of each spread group are on each node, or moving there: what the spread rule
 * of a placement reads (placement-rules.ts). An ordered tree keyed `${group}\0${node}`, so a
 * clone is copy on write like the metadata's other indexes, however many groups there are.
 */
export class SpreadIndex {
  private constructor(private readonly counts: SortedTree<string, number> = sortedTree()) {}

  static empty(): SpreadIndex {
    return new SpreadIndex();
  }

  count(group: string, node: NodeId): number {
    return this.counts.get(keyOf(group, node)) ?? 0;
  }

  /** A stream was `before` at `from` and is `after` at `to` (either side may carry no spread group). */
  move(before: StreamRecord | undefined, from: NodeId | undefined, after: StreamRecord, to: NodeId): void {
    const old = before?.placement?.spread?.group;
    const now = after.placement?.spread?.group;
    if (old === now && from === to) return;
    if (old !== undefined && from !== undefined) {
      const key = keyOf(old, from);
      const count = (this.counts.get(key) ?? 0) - 1;
      if (count > 0) this.counts.set(key, count);
      else this.counts.delete(key);
    }
    if (now !== undefined) {
      const key = keyOf(now, to);
      this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    }
  }

  clone(): SpreadIndex {
    return new SpreadIndex(this.counts.clone());
  }
}

function keyOf(group: string, node: NodeId): string {
  return `${group}\u0000${node}`;
}
