import type { ProposalStamp } from './audit-trail.js';
import type { Labels, StreamPlacement } from './labels.js';
import type { MaintenanceBudget } from './maintenance.js';
import type { NodeId, NodeLiveness, PendingTransfer, ProducerMark, StreamId, TransferReason } from './model.js';
import type { DrainProgress } from './progress.js';
import type { PlanPreview, RebalancePage } from './rebalance-preview.js';
import type { PlanGoal, PlanLimits } from './plan-record.js';
import type { PlanView } from './plan-view.js';

/**
 * The commands of the stream-transfer state machine. Each one is idempotent: applying it again
 * after it took effect answers `{ok: true, duplicate: true}` and changes nothing, which is what
 * makes every watcher retry safe.
 */
export type StreamCommand = ProposalStamp & StreamChangeCommand;

/**
 * The commands without their stamp: who proposed them (`actor`, the authenticated principal;
 * absent for a member's own component), when by its clock (`at`) and what it saw (`evidence`),
 * which the audit records they seal carry.
 */
export type StreamChangeCommand =
  | { type: 'register-node'; node: NodeId; address: string; slots: number; labels?: Labels }
  | { type: 'create-stream'; stream: StreamId; node?: NodeId; placement?: StreamPlacement }
  /** Replaces a stream's placement; the stream stays where it is (later moves respect the new one). */
  | { type: 'set-placement'; stream: StreamId; placement: StreamPlacement }
  /** A maintenance window on a node (maintenance.ts), refused past the budget it carries. */
  | { type: 'schedule-maintenance'; node: NodeId; startAt: number; endAt: number; movesPerSecond: number; budget: MaintenanceBudget }
  | { type: 'begin-maintenance'; node: NodeId }
  | { type: 'end-maintenance'; node: NodeId }
  | { type: 'maintenance-returned'; node: NodeId }
  | {
      type: 'transfer';
      stream: StreamId;
      target: NodeId;
      reason?: TransferReason;
      /** Move it only if this node still owns it (an operator's precondition, checked in apply). */
      expectedOwner?: NodeId;
      /** Move it only if it is still at this epoch. */
      expectedEpoch?: number;
    }
  | {
      type: 'close';
      stream: StreamId;
      node: NodeId;
      epoch: number;
      tail: number;
      producers: Record<string, ProducerMark>;
    }
  | { type: 'complete'; stream: StreamId; source: NodeId; target: NodeId; epoch: number }
  | { type: 'reopen'; stream: StreamId; node: NodeId; epoch: number }
  /** `expectedStreams`: drain it only if it still owns that many streams (see preconditions.ts). */
  | { type: 'drain'; node: NodeId; maxInFlight?: number; expectedStreams?: number }
  | { type: 'undrain'; node: NodeId }
  | { type: 'rebalance'; maxInFlight?: number }
  /** The metadata leader saw a node's liveness change (proposed on each change, never per renewal). */
  | { type: 'node-liveness'; node: NodeId; liveness: NodeLiveness }
  /**
   * Moves every stream of a node to live nodes at the next epoch without its cooperation, and
   * every pending transfer from it. Refused for a node that is not Dead unless `force`.
   */
  | { type: 'failover'; node: NodeId; force?: boolean; expectedStreams?: number }
  /**
   * The owner of a taken-over stream found its tail in the object store and wrote the fence that
   * ends the lost owner's writes: sealed as the trail's `zombie_fenced` record, once per takeover.
   */
  | { type: 'fenced'; stream: StreamId; node: NodeId; epoch: number; tail: number }
  /** Plans as objects (plan-commands.ts): planned in apply, executed, throttled and cancelled by id. */
  | { type: 'create-plan'; goal: PlanGoal; limits: PlanLimits }
  | { type: 'execute-plan'; plan: string }
  /** `movesPerSecond: null` takes the pace off. */
  | { type: 'set-plan-limits'; plan: string; maxConcurrent?: number; movesPerSecond?: number | null }
  | { type: 'cancel-plan'; plan: string }
  /** The leader's pacer: a paced plan may start this many more moves. */
  | { type: 'allow-plan-moves'; plan: string; moves: number }
  /** A member's audit store holds the sealed records `ids` (see audit-trail.ts); a batch per entry. */
  | { type: 'ack-audit'; ids: string[]; member: string };

export type RejectReason =
  | 'invalid_command'
  | 'unknown_stream'
  | 'unknown_node'
  | 'stream_exists'
  | 'no_free_slots'
  | 'node_draining'
  | 'already_transferring'
  | 'already_owner'
  | 'not_owner'
  | 'stale_epoch'
  | 'not_closed_at_epoch'
  | 'no_pending_transfer'
  | 'transfer_mismatch'
  | 'transfer_pending'
  | 'tail_mismatch'
  | 'node_not_dead'
  | 'node_dead'
  /** The operator's expected owner, epoch or stream count no longer holds: nothing changed. */
  | 'precondition_failed'
  /** No node satisfies the stream's required labels and spread (or the one named does not). */
  | 'placement_unsatisfiable'
  /** Another window overlaps and the budget (nodes at once, one label value) does not allow both. */
  | 'maintenance_budget'
  /** The node's window has begun: it is ended (DELETE) before another is scheduled. */
  | 'maintenance_active'
  | 'no_maintenance'
  | 'unknown_plan'
  /** The metadata changed since the plan was built on it: it is planned again, not executed. */
  | 'plan_stale'
  /** Another plan (or a rebalance) is under way: one runs at a time. */
  | 'plan_running'
  /** The plan was cancelled or has completed. */
  | 'plan_ended';

export interface Rejected {
  ok: false;
  reason: RejectReason;
  message: string;
  /** With precondition_failed: what holds now, so the operator can look again and decide. */
  current?: CurrentVersion;
  /** With placement_unsatisfiable: the streams that no node can take as their placement asks. */
  streams?: StreamId[];
}

/** A stream's owner and epoch, or a node's stream count, as apply found them. */
export type CurrentVersion =
  | { stream: StreamId; owner: NodeId; epoch: number }
  | { node: NodeId; streams: number }
  /** A stale plan: the view it was built on, and the metadata's now. */
  | { plan: string; plan_view: number; current_view: number };

export interface Accepted {
  ok: true;
  /** The command had already taken effect; nothing changed. */
  duplicate?: boolean;
  /** Where a created stream was placed, or the epoch a completion/reopen opened. */
  node?: NodeId;
  epoch?: number;
  /**
   * The node as a registration, drain, undrain or failover left it: their answers show it, so a retry under
   * the same Idempotency-Key answers what the first request was answered (no renewal age: that
   * is what one member observes, not part of the decision).
   */
  progress?: DrainProgress;
  /** The pending record a transfer created or found (its answer is built from it, so a replay matches). */
  transfer?: PendingTransfer;
  /**
   * A rebalance's answer as it started: its plan (size, first moves, effect per node) and the
   * first page of its queue. Bounded, unlike the plan itself, which the rebalance run keeps.
   */
  rebalance?: { plan: PlanPreview; progress: RebalancePage };
  /**
   * Streams whose transfer this command started besides its own (a drain's or a rebalance's
   * queue moving on), so a watcher learns from the entry alone which streams changed.
   */
  started?: StreamId[];
  /** A failover: streams given to other nodes, and streams left for lack of a free slot. */
  moved?: number;
  remaining?: number;
  /** The streams a failover gave to other nodes, or whose transfer a liveness change cancelled. */
  changed?: StreamId[];
  /** A placement change: whether the stream's owner satisfies the new placement. */
  satisfied?: boolean;
  /** Streams a failover left where they were because no live node satisfies their placement (at most 100 named). */
  unplaceable?: StreamId[];
  /** The plan a plan command created or acted on, and how it stood once decided (bounded: its first moves, its effect per node and label value), which a replay under the same Idempotency-Key answers. */
  plan?: string;
  planView?: PlanView;
  /** How many audit records the command sealed (ids `<commit_index>-0`...). */
  sealed?: number;
  /** An audit acknowledgement: records that left the state, and ids that were not pending. */
  released?: string[];
  unknown?: string[];
}

export type StreamResult = Accepted | Rejected;
