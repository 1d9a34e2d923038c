import type { ApplyContext, StateAssembly, StateCapture, StateMachine } from '@baton/contracts';
import { parseCommand } from './command-schema.js';
import type { Accepted, RejectReason, StreamCommand, StreamResult } from './commands.js';
import { AuditSeal, CLUSTER_SUBJECT, SYSTEM_ACTORS } from './audit-trail.js';
import { applyFailover, applyNodeLiveness } from './failover.js';
import { livenessOf, type NodeId, type PendingTransfer, type StreamId, type StreamRecord, type TransferReason } from './model.js';
import { planRebalance } from './placement.js';
import { chooseNode, placementAllows, setPlacement } from './placement-rules.js';
import { beginMaintenance, endMaintenance, maintenanceReturned, scheduleMaintenance } from './maintenance.js';
import { allowPlanMoves, cancelPlan, createPlan, executePlan, setPlanLimits, settlePlan } from './plan-commands.js';
import { sameLabels, type StreamPlacement } from './labels.js';
import { nodePrecondition, transferPrecondition } from './preconditions.js';
import { drainProgress } from './progress.js';
import { MOVES_SHOWN, planPreview, rebalancePage } from './rebalance-preview.js';
import { assembleMetadata, captureMetadata, restoreMetadata } from './snapshot-format.js';
import { StreamMetadata } from './stream-metadata.js';
import { acknowledgeAudits, releaseLeftVoters, type PendingAuditTable } from '@baton/consensus';

function auditTable(state: StreamMetadata): PendingAuditTable {
  return {
    get: (id) => state.auditPending(id),
    put: (pending) => state.putAuditPending(pending),
    drop: (id) => state.dropAuditPending(id),
  };
}

import { DEFAULT_DRAIN_IN_FLIGHT, DEFAULT_REBALANCE_IN_FLIGHT } from './drain-defaults.js';
export { DEFAULT_DRAIN_IN_FLIGHT, DEFAULT_REBALANCE_IN_FLIGHT };

/** Streams a drain passes over in one turn because no node can take them as their placement asks. */
const MAX_UNPLACEABLE_PASSES = 64;

function unplaceable(streams: StreamId[], message: string): StreamResult {
  return { ok: false, reason: 'placement_unsatisfiable', message, streams };
}

function samePlacement(a: StreamPlacement | undefined, b: StreamPlacement | undefined): boolean {
  const empty = (p: StreamPlacement | undefined) => !p || Object.keys(p).length === 0;
  if (empty(a) || empty(b)) return empty(a) && empty(b);
  return sameLabels(a!.require, b!.require) && sameLabels(a!.prefer, b!.prefer) && a!.spread?.group === b!.spread?.group && a!.spread?.by === b!.spread?.by;
}

function reject(reason: RejectReason, message: string): StreamResult {
  return { ok: false, reason, message };
}

function withStarted(result: Accepted, started: StreamId[]): Accepted {
  return started.length > 0 ? { ...result, started } : result;
}

/** The node as `result`'s command left it, for the answer (O(1): counts the indexes keep). */
function withProgress(state: StreamMetadata, node: NodeId, result: Accepted): Accepted {
  const progress = drainProgress(state, node);
  return progress ? { ...result, progress } : result;
}

/** The command had already taken effect: nothing changes, and the caller learns where things stand. */
function duplicate(details: Omit<Accepted, 'ok' | 'duplicate'> = {}): Accepted {
  return { ok: true, duplicate: true, ...details };
}

/**
 * The stream-transfer state machine (seed 000, "Transfers"). Pure: a function of the state, the
 * command and the log position, so every replica reaches the same metadata. Rejections are
 * results, never throws. Every command costs O(log n) in streams and nodes (plus the transfers
 * it starts): the rules read the indexes `StreamMetadata` keeps, never count or scan.
 */
export class StreamStateMachine implements StateMachine<StreamMetadata, StreamCommand, StreamResult> {
  initial(): StreamMetadata {
    return new StreamMetadata();
  }

  snapshot(state: StreamMetadata): unknown {
    return state.toSnapshot();
  }

  restore(snapshot: unknown): StreamMetadata {
    return restoreMetadata(snapshot);
  }

  /** A copy-on-write freeze now; the records are read out in pieces later (snapshot-format.ts). */
  capture(state: StreamMetadata): StateCapture {
    return captureMetadata(state);
  }

  assemble(): StateAssembly<StreamMetadata> {
    return assembleMetadata();
  }

  apply(state: StreamMetadata, raw: StreamCommand, ctx: ApplyContext): StreamResult {
    const parsed = parseCommand(raw);
    if (!parsed.ok) return reject('invalid_command', parsed.message);
    const command = parsed.command;
    const seal = new AuditSeal(state, ctx, command);
    const changes = state.viewChanges;
    const result = this.decide(state, command, ctx, seal);
    // What plans are checked against: the position of the last command that changed the view.
    if (state.viewChanges !== changes) state.viewAt = ctx.position.index;
    // Only a change seals records, so a refusal or a duplicate leaves the trail as it was.
    return result.ok && seal.sealed > 0 ? { ...result, sealed: seal.sealed } : result;
  }

  private decide(state: StreamMetadata, command: StreamCommand, ctx: ApplyContext, seal: AuditSeal): StreamResult {
    switch (command.type) {
      case 'register-node':
        return this.registerNode(state, command, ctx, seal);
      case 'create-stream':
        return this.createStream(state, command, seal);
      case 'set-placement':
        return setPlacement(state, command, reject);
      case 'schedule-maintenance':
        return scheduleMaintenance(state, command, reject);
      case 'begin-maintenance': {
        const begun = beginMaintenance(state, command, reject, seal);
        return begun.ok ? withStarted(begun, this.launchQueued(state, ctx, seal)) : begun;
      }
      case 'end-maintenance':
        return endMaintenance(state, command, reject, seal);
      case 'maintenance-returned':
        return maintenanceReturned(state, command, reject);
      case 'transfer':
        return this.transfer(state, command, ctx, seal);
      case 'close':
        return this.close(state, command);
      case 'complete':
        return this.complete(state, command, ctx, seal);
      case 'reopen':
        return this.reopen(state, command);
      case 'drain':
        return this.drain(state, command, ctx, seal);
      case 'undrain':
        return this.undrain(state, command, seal);
      case 'rebalance':
        return this.rebalance(state, command, ctx, seal);
      case 'node-liveness': {
        const result = applyNodeLiveness(state, command, reject, seal);
        return result.ok && !result.duplicate ? withStarted(result, this.launchQueued(state, ctx, seal)) : result;
      }
      case 'failover': {
        const refused = state.node(command.node) ? nodePrecondition(state, command.node, command) : undefined;
        if (refused) return refused;
        const result = applyFailover(state, command, reject, seal);
        if (!result.ok) return result;
        return withProgress(state, command.node, result.duplicate ? result : withStarted(result, this.launchQueued(state, ctx, seal)));
      }
      case 'fenced':
        return this.fenced(state, command, seal);
      case 'create-plan':
        return createPlan(state, command, ctx, reject);
      case 'execute-plan':
        return executePlan(state, command, ctx, seal, reject, () => this.launchQueued(state, ctx, seal));
      case 'set-plan-limits':
        return setPlanLimits(state, command, reject, () => this.launchQueued(state, ctx, seal));
      case 'cancel-plan': {
        const result = cancelPlan(state, command, ctx, seal, reject);
        settlePlan(state, ctx);
        return result;
      }
      case 'allow-plan-moves':
        return allowPlanMoves(state, command, () => this.launchQueued(state, ctx, seal));
      case 'ack-audit': {
        const { released, unknown } = acknowledgeAudits(auditTable(state), command.ids, command.member);
        return { ok: true, released, unknown };
      }
    }
  }

  /** Voters that left can no longer store anything: their obligations are released. */
  membershipChanged(state: StreamMetadata, ctx: ApplyContext): void {
    releaseLeftVoters(auditTable(state), state.auditPendingRecords(), ctx.voters);
  }

  private registerNode(
    state: StreamMetadata,
    c: Extract<StreamCommand, { type: 'register-node' }>,
    ctx: ApplyContext,
    seal: AuditSeal,
  ): StreamResult {
    const existing = state.node(c.node);
    if (existing && existing.address === c.address && existing.slots === c.slots && sameLabels(existing.labels, c.labels)) {
      return withProgress(state, c.node, duplicate());
    }
    state.putNode({
      id: c.node,
      address: c.address,
      slots: c.slots,
      ...(c.labels && Object.keys(c.labels).length > 0 ? { labels: { ...c.labels } } : {}),
      draining: existing?.draining ?? false,
      drainInFlight: existing?.drainInFlight ?? DEFAULT_DRAIN_IN_FLIGHT,
      ...(existing?.drainCause ? { drainCause: existing.drainCause } : {}),
      ...(existing?.liveness ? { liveness: existing.liveness } : {}),
      // A node restarted during its maintenance window is still in it.
      ...(existing?.maintenance ? { maintenance: existing.maintenance } : {}),
      ...(existing?.returning ? { returning: existing.returning } : {}),
    });
    // New capacity may be what a waiting drain or rebalance needed.
    return withProgress(state, c.node, withStarted({ ok: true, node: c.node }, this.launchQueued(state, ctx, seal)));
  }

  private createStream(state: StreamMetadata, c: Extract<StreamCommand, { type: 'create-stream' }>, seal: AuditSeal): StreamResult {
    const existing = state.stream(c.stream);
    if (existing) {
      // Creating the same stream again where it already lives is a retry, not a conflict.
      if ((c.node === undefined || c.node === existing.owner) && samePlacement(existing.placement, c.placement)) {
        return duplicate({ node: existing.owner, epoch: existing.epoch });
      }
      return reject('stream_exists', `stream ${c.stream} already exists on node ${existing.owner}${samePlacement(existing.placement, c.placement) ? '' : ' with another placement'}`);
    }
    const placement = c.placement && Object.keys(c.placement).length > 0 ? c.placement : undefined;
    let owner: NodeId;
    if (c.node !== undefined) {
      const node = state.node(c.node);
      if (!node) return reject('unknown_node', `node ${c.node} is not registered: register it first`);
      if (node.draining) return reject('node_draining', `node ${c.node} is draining and takes no new streams`);
      if (livenessOf(node) === 'Dead') return reject('node_dead', `node ${c.node} is Dead and takes no new streams`);
      if (!state.hasFreeSlot(node)) return reject('no_free_slots', `node ${c.node} has no free slot (${node.slots} slots)`);
      if (!placementAllows(state, placement, undefined, node)) {
        return unplaceable([c.stream], `node ${c.node} does not satisfy the placement of stream ${c.stream} (its required labels or its spread)`);
      }
      owner = node.id;
    } else {
      const node = chooseNode(state, placement);
      if (!node && placement) return unplaceable([c.stream], `no node with a free slot satisfies the placement of stream ${c.stream} (its required labels or its spread)`);
      if (!node) return reject('no_free_slots', 'no registered, non-draining node has a free slot: register a node or add slots');
      owner = node.id;
    }
    state.putStream({ id: c.stream, owner, epoch: 1, state: 'open', tail: 0, producers: {}, ...(placement ? { placement: structuredClone(placement) } : {}) });
    seal.seal({
      kind: 'stream_created',
      subject_type: 'stream',
      subject: c.stream,
      to: owner,
      epoch_before: 0,
      epoch_after: 1,
      actor: c.actor ?? 'system:admin',
      reason: c.node !== undefined ? `placed on ${owner} as asked` : placement ? `placed on ${owner} as its placement asks` : `placed on the least loaded node, ${owner}`,
    });
    return { ok: true, node: owner, epoch: 1 };
  }

  /** Validates and records a pending transfer (seed: "Starting a transfer"). */
  private transfer(
    state: StreamMetadata,
    c: Extract<StreamCommand, { type: 'transfer' }>,
    ctx: ApplyContext,
    seal: AuditSeal,
  ): StreamResult {
    const { stream: streamId, target: targetId } = c;
    const reason: TransferReason = c.reason ?? 'admin';
    const stream = state.stream(streamId);
    if (!stream) return reject('unknown_stream', `stream ${streamId} does not exist`);
    const refused = transferPrecondition(stream, c);
    if (refused) return refused;
    const pending = state.transfer(streamId);
    if (pending) {
      if (pending.target === targetId) return duplicate({ node: targetId, transfer: { ...pending } });
      return reject(
        'already_transferring',
        `stream ${streamId} is already transferring from ${pending.source} to ${pending.target}; wait for it to settle`,
      );
    }
    // The same transfer proposed again after it completed is still a no-op, not an error.
    if (stream.owner === targetId) return duplicate({ node: targetId });
    const target = state.node(targetId);
    if (!target) return reject('unknown_node', `target node ${targetId} is not registered`);
    if (target.draining) return reject('node_draining', `target node ${targetId} is draining and takes no new streams`);
    if (livenessOf(target) === 'Dead') return reject('node_dead', `target node ${targetId} is Dead and takes no new streams`);
    if (!state.hasFreeSlot(target)) {
      return reject('no_free_slots', `target node ${targetId} has no free slot (${target.slots} slots, all taken)`);
    }
    if (!placementAllows(state, stream.placement, stream.owner, target)) {
      return unplaceable([streamId], `target node ${targetId} does not satisfy the placement of stream ${streamId} (its required labels or its spread)`);
    }
    const started = this.startTransfer(state, stream, targetId, reason, ctx, seal, c.actor ?? 'system:admin');
    return { ok: true, node: targetId, epoch: stream.epoch, transfer: { ...started } };
  }

  /** Records the pending transfer and seals its proposal; `cause` is the drain or rebalance it belongs to. */
  private startTransfer(
    state: StreamMetadata,
    stream: StreamRecord,
    target: NodeId,
    reason: TransferReason,
    ctx: ApplyContext,
    seal: AuditSeal,
    actor: string,
    cause?: string,
  ): PendingTransfer {
    const proposal = seal.seal({
      kind: 'transfer_proposed',
      subject_type: 'stream',
      subject: stream.id,
      from: stream.owner,
      to: target,
      epoch_before: stream.epoch,
      epoch_after: stream.epoch,
      actor,
      reason,
      ...(cause ? { cause } : {}),
    });
    const pending: PendingTransfer = {
      stream: stream.id,
      source: stream.owner,
      target,
      epoch: stream.epoch,
      reason,
      since: ctx.position.index,
      proposal,
      ...(cause ? { cause } : {}),
    };
    state.addTransfer(pending);
    return pending;
  }

  /** The owner records that it closed the stream at `epoch`, with everything flushed up to `tail`. */
  private close(state: StreamMetadata, c: Extract<StreamCommand, { type: 'close' }>): StreamResult {
    const stream = state.stream(c.stream);
    if (!stream) return reject('unknown_stream', `stream ${c.stream} does not exist`);
    if (c.epoch < stream.epoch) {
      return reject('stale_epoch', `close at epoch ${c.epoch} is stale: stream ${c.stream} is at epoch ${stream.epoch}`);
    }
    if (stream.owner !== c.node) {
      return reject('not_owner', `node ${c.node} does not own stream ${c.stream} (owner ${stream.owner})`);
    }
    if (c.epoch > stream.epoch) {
      return reject('stale_epoch', `close at epoch ${c.epoch} is ahead of stream ${c.stream} (epoch ${stream.epoch})`);
    }
    if (stream.state === 'closed') {
      if (stream.tail === c.tail) return duplicate({ epoch: stream.epoch });
      return reject('tail_mismatch', `stream ${c.stream} already closed at epoch ${c.epoch} with tail ${stream.tail}, not ${c.tail}`);
    }
    if (c.tail < stream.tail) {
      return reject('tail_mismatch', `close tail ${c.tail} of stream ${c.stream} is below its recorded tail ${stream.tail}`);
    }
    // A takeover's owner closes with the tail it found in the store: exact again from here on.
    const { takeover: _, ...rest } = stream;
    state.putStream({ ...rest, state: 'closed', tail: c.tail, producers: { ...c.producers } });
    return { ok: true, epoch: stream.epoch };
  }

  /**
   * Completes a transfer (seed: "The handoff"): accepted only if the stream is closed at exactly
   * `epoch`; then, in one step, the stream is re-pointed at the target, opened at the next epoch,
   * and the pending record removed. A duplicate is harmless; a stale one is rejected.
   */
  private complete(state: StreamMetadata, c: Extract<StreamCommand, { type: 'complete' }>, ctx: ApplyContext, seal: AuditSeal): StreamResult {
    const stream = state.stream(c.stream);
    if (!stream) return reject('unknown_stream', `stream ${c.stream} does not exist`);
    const pending = state.transfer(c.stream);
    if (c.epoch < stream.epoch) {
      if (!pending && stream.owner === c.target && stream.epoch === c.epoch + 1) return duplicate({ epoch: stream.epoch });
      return reject('stale_epoch', `completion at epoch ${c.epoch} is stale: stream ${c.stream} has moved on to epoch ${stream.epoch}`);
    }
    if (!pending) return reject('no_pending_transfer', `stream ${c.stream} has no pending transfer`);
    if (pending.source !== c.source || pending.target !== c.target) {
      return reject(
        'transfer_mismatch',
        `completion ${c.source} -> ${c.target} does not match the pending transfer ${pending.source} -> ${pending.target}`,
      );
    }
    if (stream.state !== 'closed' || stream.epoch !== c.epoch) {
      return reject('not_closed_at_epoch', `stream ${c.stream} is not closed at epoch ${c.epoch} (it is ${stream.state} at ${stream.epoch})`);
    }
    state.removeTransfer(c.stream);
    const moved: StreamRecord = { ...stream, owner: pending.target, epoch: stream.epoch + 1, state: 'open' };
    state.putStream(moved);
    seal.seal({
      kind: 'transfer_completed',
      subject_type: 'stream',
      subject: c.stream,
      from: pending.source,
      to: pending.target,
      epoch_before: stream.epoch,
      epoch_after: moved.epoch,
      actor: c.actor ?? SYSTEM_ACTORS.handoff,
      reason: `closed at epoch ${stream.epoch} with tail ${stream.tail}; opened at epoch ${moved.epoch}`,
      // The proposal it settles when it was standalone, else the drain or rebalance.
      ...(pending.cause ?? pending.proposal ? { cause: pending.cause ?? pending.proposal } : {}),
    });
    return withStarted({ ok: true, node: moved.owner, epoch: moved.epoch }, this.launchQueued(state, ctx, seal));
  }

  /** The new owner of a taken-over stream fenced the lost owner in the object store (sealed once). */
  private fenced(state: StreamMetadata, c: Extract<StreamCommand, { type: 'fenced' }>, seal: AuditSeal): StreamResult {
    const stream = state.stream(c.stream);
    if (!stream) return reject('unknown_stream', `stream ${c.stream} does not exist`);
    const takeover = stream.takeover;
    // Closed since (the takeover ended) or already recorded: nothing more to say.
    if (stream.epoch > c.epoch || !takeover || takeover.fenced) return duplicate({ epoch: stream.epoch });
    if (stream.owner !== c.node) return reject('not_owner', `node ${c.node} does not own stream ${c.stream} (owner ${stream.owner})`);
    if (stream.epoch !== c.epoch) return reject('stale_epoch', `fence at epoch ${c.epoch} is ahead of stream ${c.stream} (epoch ${stream.epoch})`);
    state.putStream({ ...stream, takeover: { ...takeover, fenced: true } });
    seal.seal({
      kind: 'zombie_fenced',
      subject_type: 'stream',
      subject: c.stream,
      from: takeover.from,
      to: c.node,
      epoch_before: takeover.epoch,
      epoch_after: c.epoch,
      actor: SYSTEM_ACTORS.takeover,
      reason: `${c.node} found the tail at ${c.tail} and fenced ${takeover.from}'s epoch ${takeover.epoch} in the object store`,
      ...(takeover.cause ? { cause: takeover.cause } : {}),
    });
    return { ok: true, node: c.node, epoch: c.epoch };
  }

  /** The owner reopens a stream it closed without a transfer (after crash recovery). */
  private reopen(state: StreamMetadata, c: Extract<StreamCommand, { type: 'reopen' }>): StreamResult {
    const stream = state.stream(c.stream);
    if (!stream) return reject('unknown_stream', `stream ${c.stream} does not exist`);
    if (stream.owner !== c.node) return reject('not_owner', `node ${c.node} does not own stream ${c.stream}`);
    if (stream.state === 'open' && stream.epoch === c.epoch + 1) return duplicate({ epoch: stream.epoch });
    if (c.epoch < stream.epoch) return reject('stale_epoch', `reopen from epoch ${c.epoch} is stale: stream is at ${stream.epoch}`);
    if (state.transfer(c.stream)) {
      return reject('transfer_pending', `stream ${c.stream} is transferring; the target opens it`);
    }
    if (stream.state !== 'closed' || stream.epoch !== c.epoch) {
      return reject('not_closed_at_epoch', `stream ${c.stream} is not closed at epoch ${c.epoch}`);
    }
    state.putStream({ ...stream, epoch: stream.epoch + 1, state: 'open' });
    return { ok: true, node: stream.owner, epoch: stream.epoch + 1 };
  }

  private drain(state: StreamMetadata, c: Extract<StreamCommand, { type: 'drain' }>, ctx: ApplyContext, seal: AuditSeal): StreamResult {
    const node = state.node(c.node);
    if (!node) return reject('unknown_node', `node ${c.node} is not registered`);
    const refused = nodePrecondition(state, node.id, c);
    if (refused) return refused;
    // 0 is a drain plan's mark (its nodes move at the plan's limits): a drain asked for now moves at the default.
    const inFlight = c.maxInFlight ?? (node.drainInFlight > 0 ? node.drainInFlight : DEFAULT_DRAIN_IN_FLIGHT);
    const unchanged = node.draining && node.drainInFlight === inFlight;
    let drainCause = node.drainCause;
    if (!unchanged) {
      drainCause = seal.seal({
        kind: 'node_drain',
        subject_type: 'node',
        subject: node.id,
        from: node.id,
        actor: c.actor ?? 'system:admin',
        reason: `${state.ownedCount(node.id)} streams to give away, ${inFlight} in flight at once`,
      });
    }
    state.putNode({ ...node, draining: true, drainInFlight: inFlight, ...(drainCause ? { drainCause } : {}) });
    const started = this.launchQueued(state, ctx, seal);
    return withProgress(state, node.id, withStarted(unchanged ? duplicate({ node: node.id }) : { ok: true, node: node.id }, started));
  }

  private undrain(state: StreamMetadata, c: Extract<StreamCommand, { type: 'undrain' }>, seal: AuditSeal): StreamResult {
    const node = state.node(c.node);
    if (!node) return reject('unknown_node', `node ${c.node} is not registered`);
    if (!node.draining) return withProgress(state, node.id, duplicate({ node: node.id }));
    // Transfers already pending finish; no new ones start.
    const { drainCause, ...rest } = node;
    state.putNode({ ...rest, draining: false });
    seal.seal({
      kind: 'node_undrain',
      subject_type: 'node',
      subject: node.id,
      actor: c.actor ?? 'system:admin',
      reason: `${state.ownedCount(node.id)} streams stay; transfers already pending finish`,
      ...(drainCause ? { cause: drainCause } : {}),
    });
    return withProgress(state, node.id, { ok: true, node: node.id });
  }

  private rebalance(state: StreamMetadata, c: Extract<StreamCommand, { type: 'rebalance' }>, ctx: ApplyContext, seal: AuditSeal): StreamResult {
    const plan = state.plans.running();
    if (plan) return reject('plan_running', `plan ${plan.id} is running: one plan runs at a time (cancel it, or wait for it to end)`);
    const moves = planRebalance(state);
    const maxInFlight = c.maxInFlight ?? DEFAULT_REBALANCE_IN_FLIGHT;
    const cause = seal.seal({
      kind: 'rebalance_planned',
      subject_type: 'cluster',
      subject: CLUSTER_SUBJECT,
      actor: c.actor ?? 'system:admin',
      reason: `${moves.length} moves planned, ${maxInFlight} in flight at once`,
    });
    state.startRebalance([...moves], maxInFlight, cause);
    const started = this.launchQueued(state, ctx, seal);
    // The answer is taken as decided (O(plan), like the planning): a replay shows the same.
    const rebalance = { plan: planPreview(state, moves), progress: rebalancePage(state, undefined, MOVES_SHOWN) };
    return withStarted({ ok: true, rebalance }, started);
  }

  /**
   * Starts the transfers that drains and the rebalance queue are waiting to start, up to their
   * in-flight bounds. Runs inside apply, so progress needs no coordinator that could crash.
   * Draining nodes go in id order, each giving its streams in id order to the least loaded
   * node; costs O(log n) per transfer started (plus one per move the rebalance skips).
   */
  private launchQueued(state: StreamMetadata, ctx: ApplyContext, seal: AuditSeal): StreamId[] {
    const started: StreamId[] = [];
    let nodeId = state.nextDrainReady();
    drains: while (nodeId !== undefined) {
      const node = state.node(nodeId)!;
      // Streams no node can take as their placement asks stay, and are passed over (a bounded number per turn).
      let passedOver: StreamId | undefined;
      let passes = 0;
      while (state.outgoingCount(node.id) < node.drainInFlight) {
        const streamId = state.idleStreamsOf(node.id, passedOver).next().value as string | undefined;
        if (streamId === undefined) break;
        const stream = state.stream(streamId)!;
        const target = chooseNode(state, stream.placement, node.id);
        if (!target && stream.placement && passes < MAX_UNPLACEABLE_PASSES) {
          passedOver = streamId;
          passes += 1;
          continue;
        }
        // No node can take a stream: no other drain can start one either.
        if (!target) break drains;
        this.startTransfer(state, stream, target.id, 'drain', ctx, seal, SYSTEM_ACTORS.drain, node.drainCause);
        started.push(streamId);
      }
      nodeId = state.nextDrainReady(node.id);
    }
    while (state.rebalancesInFlight < state.rebalanceMaxInFlight && state.rebalanceQueue?.mayStart) {
      const move = state.takeRebalanceMove();
      if (!move) break;
      const stream = state.stream(move.stream);
      const target = state.node(move.target);
      const valid =
        stream &&
        target &&
        !state.transfer(move.stream) &&
        stream.owner !== move.target &&
        !target.draining &&
        livenessOf(target) !== 'Dead' &&
        state.hasFreeSlot(target) &&
        placementAllows(state, stream.placement, stream.owner, target);
      if (!valid) {
        state.countRebalanceMove('skipped');
        continue;
      }
      this.startTransfer(state, stream, move.target, 'rebalance', ctx, seal, SYSTEM_ACTORS.rebalance, state.rebalanceCause);
      state.countRebalanceMove('started');
      started.push(move.stream);
    }
    // A drain plan that completed hands its nodes' leftovers (streams it could not place, or that came back) to their drain.
    if (settlePlan(state, ctx)) started.push(...this.launchQueued(state, ctx, seal));
    return started;
  }
}

export const streamStateMachine = (): StreamStateMachine => new StreamStateMachine();
