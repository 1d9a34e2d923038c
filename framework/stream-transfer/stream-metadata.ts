import {
  livenessOf,
  type NodeId,
  type NodeRecord,
  type PendingTransfer,
  type PlannedMove,
  type StreamId,
  type StreamRecord,
  type TransferReason,
} from './model.js';
import { emptyChain, keysAfter, sortedTree, updateValue, valuesAfter, type PendingAudit, type SortedTree, type TrailChain } from '@baton/consensus';
import { SpreadIndex } from './spread-index.js';
import { PlanBook, type PlanRecord } from './plan-record.js';
import { PlacementViolations } from './placement-violations.js';
import { sameLabels } from './labels.js';
import { RebalanceQueue, type RebalanceRun, type RebalanceTallies } from './rebalance-queue.js';

export type { RebalanceRun };

/** The plain-JSON form of the metadata, as it crosses disks and the network in snapshots. */
export interface StreamMetadataSnapshot {
  format: 2;
  /** Sorted by id. */
  nodes: NodeRecord[];
  /** Sorted by id. */
  streams: StreamRecord[];
  /** Sorted by stream id. */
  transfers: PendingTransfer[];
  rebalance?: RebalanceRun;
  /** The audit trail's chain head and anchors, and the sealed records not yet stored everywhere. */
  audit?: { chain: TrailChain; pending: PendingAudit[] };
  /** The plan objects, oldest first, and the log index of the last change to the view they are checked against. */
  plans?: PlanRecord[];
  view?: number;
}

/** What each node holds, kept current per command so no rule has to count. */
interface NodeIndex {
  /** Streams owned here with no transfer pending, by id: what a drain or a rebalance can move. */
  idle: SortedTree<StreamId, true>;
  /** Pending transfers away from here (the stream is still owned here), by stream id. */
  outgoing: SortedTree<StreamId, true>;
  /** Pending transfers towards here (they count against the slots already), by stream id. */
  incoming: SortedTree<StreamId, true>;
}

/** The order placement prefers: lowest fill ratio, then fewest streams, then id (replicas agree). */
interface PlacementKey {
  id: NodeId;
  load: number;
  slots: number;
}

function comparePlacement(a: PlacementKey, b: PlacementKey): number {
  // Cross-multiplied so the ratio comparison is exact on integers.
  const ratio = a.load * b.slots - b.load * a.slots;
  if (ratio !== 0) return ratio;
  if (a.load !== b.load) return a.load - b.load;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

function compareSince(a: PendingTransfer, b: PendingTransfer): number {
  return a.since - b.since || (a.stream < b.stream ? -1 : a.stream > b.stream ? 1 : 0);
}

/**
 * The replicated metadata of the stream-transfer variant, with the indexes its rules need:
 * per node the streams it owns (idle or leaving) and the transfers towards it, the nodes that can
 * take a stream ordered by load, the draining nodes with a transfer to start, and the rebalance
 * queue. Every mutation keeps them current in O(log n), so no command of the state machine counts
 * or scans; `restore` rebuilds them from the records.
 *
 * Ids are keys of ordered trees, never object properties, so `constructor` or `toString` are
 * ids like any other. Records are replaced on change, never mutated: a `clone()` (copy on write,
 * O(nodes)) then shares them safely, which is what makes frozen views and snapshots cheap.
 */
export class StreamMetadata {
  #nodes: SortedTree<NodeId, NodeRecord> = sortedTree();
  #streams: SortedTree<StreamId, StreamRecord> = sortedTree();
  #transfers: SortedTree<StreamId, PendingTransfer> = sortedTree();
  #rebalance?: RebalanceQueue;

  #byNode = new Map<NodeId, NodeIndex>();
  /** Registered, non-draining nodes with a free slot, best placement first. */
  #placeable: SortedTree<PlacementKey, true> = sortedTree(comparePlacement);
  #placementKeys = new Map<NodeId, PlacementKey>();
  /** Draining nodes that still own an idle stream and are below their in-flight bound. */
  #drainReady: SortedTree<NodeId, true> = sortedTree();
  /** Pending transfers oldest first (log index, then stream id). */
  #bySince: SortedTree<PendingTransfer, true> = sortedTree(compareSince);
  #rebalancesInFlight = 0;
  /** Sealed audit records some voter has not stored yet, by id (see audit-trail.ts). */
  #auditPending: SortedTree<string, PendingAudit> = sortedTree();
  #auditChain: TrailChain = emptyChain();
  /** Streams of each spread group per node they are on or moving to. */
  #spread = SpreadIndex.empty();
  /** Streams whose owner breaks their placement's requirement or preferences. */
  #violations = PlacementViolations.empty();
  #plans = PlanBook.empty();
  /**
   * Counts changes to what a plan is computed from (nodes, owners, placements, pending
   * transfers), for the state machine to tell whether a command changed the view. Local to this
   * copy, never replicated: `#viewAt` is.
   */
  #changes = 0;
  /**
   * The log index of the last command that changed the view: replicated (snapshots carry it), so
   * every member holds the same value once that command is applied. A plan made at a later index
   * is still current; one made before it is stale.
   */
  #viewAt = 0;

  // ---- reads ------------------------------------------------------------------------------------

  node(id: NodeId): NodeRecord | undefined {
    return this.#nodes.get(id);
  }

  get nodeCount(): number {
    return this.#nodes.size;
  }

  /** Nodes by id, strictly after `after` when given. */
  nodes(after?: NodeId): IterableIterator<NodeRecord> {
    return valuesAfter(this.#nodes, after);
  }

  stream(id: StreamId): StreamRecord | undefined {
    return this.#streams.get(id);
  }

  get streamCount(): number {
    return this.#streams.size;
  }

  /** Streams by id, strictly after `after` when given (a listing cursor). */
  streams(after?: StreamId): IterableIterator<StreamRecord> {
    return valuesAfter(this.#streams, after);
  }

  transfer(stream: StreamId): PendingTransfer | undefined {
    return this.#transfers.get(stream);
  }

  get transferCount(): number {
    return this.#transfers.size;
  }

  /** Pending transfers by stream id, strictly after `after` when given. */
  transfers(after?: StreamId): IterableIterator<PendingTransfer> {
    return valuesAfter(this.#transfers, after);
  }

  /**
   * Pending transfers, oldest first (by the log index that started them, then stream id),
   * strictly after the position `after` when given.
   */
  *transfersBySince(after?: Pick<PendingTransfer, 'since' | 'stream'>): IterableIterator<PendingTransfer> {
    let key = after === undefined ? this.#bySince.minKey() : this.#bySince.nextHigherKey(after as PendingTransfer);
    while (key !== undefined) {
      yield key;
      key = this.#bySince.nextHigherKey(key);
    }
  }

  /** Pending transfers whose source is `node`, by stream id. */
  *transfersFrom(node: NodeId): IterableIterator<PendingTransfer> {
    const index = this.#byNode.get(node);
    if (index) for (const stream of keysAfter(index.outgoing)) yield this.#transfers.get(stream)!;
  }

  /** Pending transfers whose target is `node`, by stream id. */
  *transfersTo(node: NodeId): IterableIterator<PendingTransfer> {
    const index = this.#byNode.get(node);
    if (index) for (const stream of keysAfter(index.incoming)) yield this.#transfers.get(stream)!;
  }

  /** Streams `node` owns with no transfer pending, by id, strictly after `after` when given. */
  idleStreamsOf(node: NodeId, after?: StreamId): IterableIterator<StreamId> {
    const index = this.#byNode.get(node);
    return index ? keysAfter(index.idle, after) : [][Symbol.iterator]();
  }

  /** Every stream `node` owns: the idle ones by id, then those leaving, by id. */
  *streamsOwnedBy(node: NodeId): IterableIterator<StreamRecord> {
    const index = this.#byNode.get(node);
    if (!index) return;
    for (const id of keysAfter(index.idle)) yield this.#streams.get(id)!;
    for (const id of keysAfter(index.outgoing)) yield this.#streams.get(id)!;
  }

  /** Streams `node` owns, leaving or not. */
  ownedCount(node: NodeId): number {
    const index = this.#byNode.get(node);
    return index ? index.idle.size + index.outgoing.size : 0;
  }

  idleCount(node: NodeId): number {
    return this.#byNode.get(node)?.idle.size ?? 0;
  }

  incomingCount(node: NodeId): number {
    return this.#byNode.get(node)?.incoming.size ?? 0;
  }

  outgoingCount(node: NodeId): number {
    return this.#byNode.get(node)?.outgoing.size ?? 0;
  }

  /** Streams a node owns or is about to receive: what counts against its slots. */
  load(node: NodeId): number {
    return this.ownedCount(node) + this.incomingCount(node);
  }

  hasFreeSlot(node: NodeRecord): boolean {
    return this.load(node.id) < node.slots;
  }

  /**
   * The node that should take one more stream: registered, not draining, with a free slot, and
   * the lowest fill ratio (then fewest streams, then id). O(log nodes).
   */
  leastLoadedNode(exclude?: NodeId): NodeRecord | undefined {
    let key = this.#placeable.minKey();
    if (key && key.id === exclude) key = this.#placeable.nextHigherKey(key);
    return key ? this.#nodes.get(key.id) : undefined;
  }

  /** Registered, non-draining, not Dead nodes with a free slot, best placement first (O(nodes) to walk). */
  *placeableNodes(): IterableIterator<NodeRecord> {
    // The tree's own cursor (one walk), not a descent per node: the caller changes nothing meanwhile.
    for (const key of this.#placeable.keys()) yield this.#nodes.get(key.id)!;
  }

  /** Every node record by id, in one walk of the tree; for reads that change nothing while they iterate. */
  nodeRecords(): IterableIterator<NodeRecord> {
    return this.#nodes.values();
  }

  /** Streams of a spread group on `node`, or moving there. */
  spreadCount(group: string, node: NodeId): number {
    return this.#spread.count(group, node);
  }

  /** The nodes holding (or receiving) streams of a spread group, with how many each. */
  spreadCountsOf(group: string): ReadonlyMap<NodeId, number> {
    return this.#spread.countsOf(group);
  }

  /** Streams whose owner breaks their placement (counts, and those whose preferences are unmet). */
  get violations(): PlacementViolations {
    return this.#violations;
  }

  get plans(): PlanBook {
    return this.#plans;
  }

  /** Changes made to this copy so far (a local count: the state machine compares it around a command). */
  get viewChanges(): number {
    return this.#changes;
  }

  /** The log index of the last command that changed nodes, owners, placements or pending transfers. */
  get viewAt(): number {
    return this.#viewAt;
  }

  set viewAt(index: number) {
    this.#viewAt = index;
  }

  /** Draining nodes that have a transfer to start, by id, strictly after `after`. */
  nextDrainReady(after?: NodeId): NodeId | undefined {
    return after === undefined ? this.#drainReady.minKey() : this.#drainReady.nextHigherKey(after);
  }

  /** Pending transfers started by the rebalance. */
  get rebalancesInFlight(): number {
    return this.#rebalancesInFlight;
  }

  /** The rebalance as operators see it (copies the waiting moves: not for `apply`). */
  get rebalance(): RebalanceRun | undefined {
    return this.#rebalance?.run();
  }

  /** The current rebalance run (or executed plan), for the rules that start, pace and stop its moves. */
  get rebalanceQueue(): RebalanceQueue | undefined {
    return this.#rebalance;
  }

  get rebalanceWaiting(): number {
    return this.#rebalance?.waiting ?? 0;
  }

  get rebalanceMaxInFlight(): number {
    return this.#rebalance?.maxInFlight ?? 0;
  }

  /** The audit trail's chain: replaced, never changed in place. */
  get auditChain(): TrailChain {
    return this.#auditChain;
  }

  set auditChain(chain: TrailChain) {
    this.#auditChain = chain;
  }

  auditPending(id: string): PendingAudit | undefined {
    return this.#auditPending.get(id);
  }

  /** The sealed records still pending, by id: the projection backlog, not the streams. */
  auditPendingRecords(): IterableIterator<PendingAudit> {
    return valuesAfter(this.#auditPending);
  }

  get auditPendingCount(): number {
    return this.#auditPending.size;
  }

  // ---- mutations (the state machine's rules call these) -----------------------------------------

  putAuditPending(pending: PendingAudit): void {
    this.#auditPending.set(pending.record.id, pending);
  }

  dropAuditPending(id: string): void {
    this.#auditPending.delete(id);
  }

  putNode(record: NodeRecord): void {
    this.#changes += 1;
    const previous = this.#nodes.get(record.id);
    this.#nodes.set(record.id, record);
    // Relabelled: its streams are judged against the new labels (O(streams it owns), on a relabelling only).
    if (previous && !sameLabels(previous.labels, record.labels)) {
      for (const stream of this.streamsOwnedBy(record.id)) if (stream.placement) this.#violations.check(stream, record);
    }
    this.#indexOf(record.id);
    this.#refreshNode(record.id);
  }

  /** Adds a stream or replaces its record, moving it between owners' indexes if the owner changed. */
  putStream(record: StreamRecord): void {
    // A known stream is replaced in one descent of the tree (close, complete, every transfer's
    // settling); only a new one takes a second, to be inserted.
    let previous: StreamRecord | undefined;
    const replaced = updateValue(this.#streams, record.id, (current) => {
      previous = current;
      return record;
    });
    if (replaced === undefined) this.#streams.set(record.id, record);
    if (!previous || previous.owner !== record.owner || previous.placement !== record.placement) {
      this.#changes += 1;
      if (record.placement || previous?.placement) this.#violations.check(record, this.#nodes.get(record.owner));
    }
    const movingTo = this.#transfers.get(record.id)?.target;
    this.#spread.move(previous, movingTo ?? previous?.owner, record, movingTo ?? record.owner);
    if (previous && previous.owner === record.owner) return;
    const pending = this.#transfers.has(record.id);
    if (previous) {
      const old = this.#indexOf(previous.owner);
      old.idle.delete(record.id);
      old.outgoing.delete(record.id);
      this.#refreshNode(previous.owner);
    }
    const index = this.#indexOf(record.owner);
    (pending ? index.outgoing : index.idle).set(record.id, true);
    this.#refreshNode(record.owner);
  }

  /** Records a pending transfer; `transfer.source` must be the stream's owner. */
  addTransfer(transfer: PendingTransfer): void {
    this.removeTransfer(transfer.stream);
    this.#changes += 1;
    this.#transfers.set(transfer.stream, transfer);
    const moving = this.#streams.get(transfer.stream);
    if (moving) this.#spread.move(moving, moving.owner, moving, transfer.target);
    this.#bySince.set(transfer, true);
    const source = this.#indexOf(transfer.source);
    source.idle.delete(transfer.stream);
    source.outgoing.set(transfer.stream, true);
    this.#indexOf(transfer.target).incoming.set(transfer.stream, true);
    if (transfer.reason === 'rebalance') this.#rebalancesInFlight += 1;
    this.#refreshNode(transfer.source);
    this.#refreshNode(transfer.target);
  }

  /** Drops a pending transfer; the stream stays with its current owner (re-point it first to move it). */
  removeTransfer(stream: StreamId): PendingTransfer | undefined {
    const transfer = this.#transfers.get(stream);
    if (!transfer) return undefined;
    this.#changes += 1;
    this.#transfers.delete(stream);
    this.#bySince.delete(transfer);
    const source = this.#indexOf(transfer.source);
    source.outgoing.delete(stream);
    const record = this.#streams.get(stream);
    if (record) this.#indexOf(record.owner).idle.set(stream, true);
    if (record) this.#spread.move(record, transfer.target, record, record.owner);
    this.#indexOf(transfer.target).incoming.delete(stream);
    if (transfer.reason === 'rebalance') this.#rebalancesInFlight -= 1;
    this.#refreshNode(transfer.source);
    this.#refreshNode(transfer.target);
    if (record && record.owner !== transfer.source) this.#refreshNode(record.owner);
    return transfer;
  }

  /** Replaces the rebalance run with a new plan; `plan` names the plan object it executes, `paced` starts it with no allowance. */
  startRebalance(moves: PlannedMove[], maxInFlight: number, cause?: string, plan?: { id: string; paced: boolean }): void {
    this.#rebalance = RebalanceQueue.start(moves, maxInFlight, cause, plan);
  }

  /** The audit record id of the rebalance whose moves are being started. */
  get rebalanceCause(): string | undefined {
    return this.#rebalance?.cause;
  }

  /** Takes the next waiting move of the rebalance, if any. */
  takeRebalanceMove(): PlannedMove | undefined {
    return this.#rebalance?.take();
  }

  countRebalanceMove(outcome: 'started' | 'skipped'): void {
    this.#rebalance?.count(outcome);
  }

  // ---- copies -------------------------------------------------------------------------------------

  /** An independent copy sharing the (immutable) records: O(nodes), not O(streams). */
  clone(): StreamMetadata {
    const copy = new StreamMetadata();
    copy.#nodes = this.#nodes.clone();
    copy.#streams = this.#streams.clone();
    copy.#transfers = this.#transfers.clone();
    // The moves array is never changed in place (taking a move advances `next`), so it is shared.
    copy.#rebalance = this.#rebalance?.clone();
    for (const [id, index] of this.#byNode) {
      copy.#byNode.set(id, { idle: index.idle.clone(), outgoing: index.outgoing.clone(), incoming: index.incoming.clone() });
    }
    copy.#placeable = this.#placeable.clone();
    copy.#placementKeys = new Map(this.#placementKeys);
    copy.#drainReady = this.#drainReady.clone();
    copy.#bySince = this.#bySince.clone();
    copy.#rebalancesInFlight = this.#rebalancesInFlight;
    copy.#auditPending = this.#auditPending.clone();
    copy.#auditChain = this.#auditChain;
    copy.#spread = this.#spread.clone();
    copy.#violations = this.#violations.clone();
    copy.#plans = this.#plans.clone();
    copy.#changes = this.#changes;
    copy.#viewAt = this.#viewAt;
    return copy;
  }

  /** The records in id order; they are shared, not copied (records are never mutated). */
  toSnapshot(): StreamMetadataSnapshot {
    const snapshot: StreamMetadataSnapshot = {
      format: 2,
      nodes: this.#nodes.valuesArray(),
      streams: this.#streams.valuesArray(),
      transfers: this.#transfers.valuesArray(),
    };
    const rebalance = this.rebalance;
    if (rebalance) snapshot.rebalance = rebalance;
    if (this.#auditChain.head || this.#auditPending.size > 0) {
      snapshot.audit = { chain: this.#auditChain, pending: this.#auditPending.valuesArray() };
    }
    if (this.#plans.records().length > 0) snapshot.plans = [...this.#plans.records()];
    snapshot.view = this.#viewAt;
    return snapshot;
  }

  /** `JSON.stringify(state)` gives the snapshot form rather than `{}`. */
  toJSON(): StreamMetadataSnapshot {
    return this.toSnapshot();
  }

  /** Rebuilds the metadata and every index from a snapshot's records. */
  static fromSnapshot(snapshot: StreamMetadataSnapshot): StreamMetadata {
    const state = new StreamMetadata();
    for (const node of snapshot.nodes) state.putNode({ ...node });
    for (const stream of snapshot.streams) state.putStream({ ...stream, producers: { ...stream.producers } });
    for (const transfer of snapshot.transfers) state.addTransfer({ ...transfer });
    if (snapshot.rebalance) {
      const { queue, ...tallies } = snapshot.rebalance;
      state.restoreRebalance(tallies, queue);
    }
    if (snapshot.audit) {
      state.#auditChain = structuredClone(snapshot.audit.chain);
      for (const pending of snapshot.audit.pending) state.putAuditPending(structuredClone(pending));
    }
    state.restorePlans(snapshot.plans ?? [], snapshot.view ?? 0);
    return state;
  }

  /** Puts back the plans and the view's log index a snapshot carries (0 from a snapshot older than plans: no plan predates it). */
  restorePlans(plans: readonly PlanRecord[], viewAt: number): void {
    this.#plans = PlanBook.of(plans);
    this.#viewAt = viewAt;
  }

  /** Puts back a rebalance run read from a snapshot: its tallies, then (possibly in parts) its waiting moves. */
  restoreRebalance(tallies: RebalanceTallies, waiting: PlannedMove[] = []): void {
    this.#rebalance = RebalanceQueue.restore(tallies, waiting);
  }

  /** Adds waiting moves while a state is being assembled (no clone shares the array yet). */
  appendRebalanceMoves(waiting: PlannedMove[]): void {
    if (!this.#rebalance) throw new Error('rebalance moves arrived before the rebalance run');
    this.#rebalance.append(waiting);
  }

  /** The waiting rebalance moves and the run's tallies, without copying the moves. */
  rebalanceParts(): { tallies: RebalanceTallies; moves: readonly PlannedMove[]; next: number } | undefined {
    return this.#rebalance?.parts();
  }

  // ---- index upkeep -------------------------------------------------------------------------------

  #indexOf(node: NodeId): NodeIndex {
    let index = this.#byNode.get(node);
    if (!index) {
      index = { idle: sortedTree(), outgoing: sortedTree(), incoming: sortedTree() };
      this.#byNode.set(node, index);
    }
    return index;
  }

  /** Re-derives a node's place in the placement order and in the drain queue. */
  #refreshNode(id: NodeId): void {
    const previous = this.#placementKeys.get(id);
    if (previous) {
      this.#placeable.delete(previous);
      this.#placementKeys.delete(id);
    }
    const node = this.#nodes.get(id);
    if (!node) return;
    const load = this.load(id);
    // A Dead node takes nothing new: no placement, no drain or rebalance target, no failover.
    if (!node.draining && livenessOf(node) !== 'Dead' && load < node.slots) {
      const key: PlacementKey = { id, load, slots: node.slots };
      this.#placeable.set(key, true);
      this.#placementKeys.set(id, key);
    }
    if (node.draining && this.idleCount(id) > 0 && this.outgoingCount(id) < node.drainInFlight) this.#drainReady.set(id, true);
    else this.#drainReady.delete(id);
  }
}

export function emptyMetadata(): StreamMetadata {
  return new StreamMetadata();
}

export type { TransferReason };
