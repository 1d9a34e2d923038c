import { keysAfter, sortedTree, type SortedTree } from '@baton/consensus';
import type { NodeRecord, StreamId, StreamRecord } from './model.js';
import { preferScore, satisfiesRequired } from './placement-rules.js';

/**
 * The streams whose owner breaks their placement, kept current as owners, placements and node
 * labels change, so a plan counts violations and `restore-preferences` finds its streams
 * without walking every stream:
 * - `required`: the owner lacks a label the placement requires (a placement changed under a
 *   stream, or a node relabelled: moves never break it);
 * - `preferences`: the owner lacks one of the placement's preferred labels.
 * O(log n) per stream change; a node's relabelling re-checks the streams it owns.
 */
export class PlacementViolations {
  private constructor(
    private readonly requiredUnmet: SortedTree<StreamId, true> = sortedTree(),
    private readonly preferencesUnmet: SortedTree<StreamId, true> = sortedTree(),
  ) {}

  static empty(): PlacementViolations {
    return new PlacementViolations();
  }

  get required(): number {
    return this.requiredUnmet.size;
  }

  get preferences(): number {
    return this.preferencesUnmet.size;
  }

  /** Streams whose owner lacks one of their preferred labels, by id. */
  unmetPreferences(): IterableIterator<StreamId> {
    return keysAfter(this.preferencesUnmet);
  }

  /** Re-checks one stream against its owner (`owner` undefined: not registered, so nothing to judge). */
  check(stream: StreamRecord, owner: NodeRecord | undefined): void {
    const placement = stream.placement;
    mark(this.requiredUnmet, stream.id, !!placement?.require && !!owner && !satisfiesRequired(owner, placement));
    mark(this.preferencesUnmet, stream.id, !!placement?.prefer && !!owner && preferScore(owner, placement) < Object.keys(placement.prefer).length);
  }

  clone(): PlacementViolations {
    return new PlacementViolations(this.requiredUnmet.clone(), this.preferencesUnmet.clone());
  }
}

function mark(tree: SortedTree<StreamId, true>, stream: StreamId, unmet: boolean): void {
  if (unmet) {
    if (!tree.has(stream)) tree.set(stream, true);
  } else if (tree.has(stream)) tree.delete(stream);
}
