import type { ApplyContext, StateMachine } from '../contracts/metadata-consensus.js';
import { parseCommand } from './command-schema.js';
import type { Accepted, RejectReason, StreamCommand, StreamResult } from './commands.js';
import {
  emptyMetadata,
  own,
  type NodeId,
  type PendingTransfer,
  type StreamMetadata,
  type StreamRecord,
  type TransferReason,
} from './model.js';
import { hasFreeSlot, leastLoadedNode, loadByNode, planRebalance } from './placement.js';

/** Transfers a drain keeps in flight when the operator does not say. */
export const DEFAULT_DRAIN_IN_FLIGHT = 32;
/** Moves a rebalance keeps in flight when the operator does not say. */
export const DEFAULT_REBALANCE_IN_FLIGHT = 16;

function reject(reason: RejectReason, message: string): StreamResult {
  return { ok: false, reason, message };
}

/** The command had already taken effect: nothing changes, and the caller learns where things stand. */
function duplicate(details: Omit<Accepted, 'ok' | 'duplicate'> = {}): Accepted {
  return { ok: true, duplicate: true, ...details };
}

/**
 * The stream-transfer state machine (seed 000, "Transfers"). Pure: a function of the state, the
 * command and the log position, so every replica reaches the same metadata. Rejections are
 * results, never throws.
 */
export class StreamStateMachine implements StateMachine<StreamMetadata, StreamCommand, StreamResult> {
  initial(): StreamMetadata {
    return emptyMetadata();
  }

  snapshot(state: StreamMetadata): unknown {
    return structuredClone(state);
  }

  restore(snapshot: unknown): StreamMetadata {
    const state = structuredClone(snapshot) as StreamMetadata;
    if (!state || typeof state !== 'object' || !state.nodes || !state.streams || !state.transfers) {
      throw new Error('stream metadata snapshot is malformed: expected {nodes, streams, transfers}');
    }
    return state;
  }

  apply(state: StreamMetadata, raw: StreamCommand, ctx: ApplyContext): StreamResult {
    const parsed = parseCommand(raw);
    if (!parsed.ok) return reject('invalid_command', parsed.message);
    const command = parsed.command;
    switch (command.type) {
      case 'register-node':
        return this.registerNode(state, command, ctx);
      case 'create-stream':
        return this.createStream(state, command);
      case 'transfer':
        return this.transfer(state, command.stream, command.target, command.reason ?? 'admin', ctx);
      case 'close':
        return this.close(state, command);
      case 'complete':
        return this.complete(state, command, ctx);
      case 'reopen':
        return this.reopen(state, command);
      case 'drain':
        return this.drain(state, command, ctx);
      case 'undrain':
        return this.undrain(state, command);
      case 'rebalance':
        return this.rebalance(state, command, ctx);
    }
  }

  private registerNode(
    state: StreamMetadata,
    c: Extract<StreamCommand, { type: 'register-node' }>,
    ctx: ApplyContext,
  ): StreamResult {
    const existing = own(state.nodes, c.node);
    if (existing && existing.address === c.address && existing.slots === c.slots) return duplicate();
    state.nodes[c.node] = {
      id: c.node,
      address: c.address,
      slots: c.slots,
      draining: existing?.draining ?? false,
      drainInFlight: existing?.drainInFlight ?? DEFAULT_DRAIN_IN_FLIGHT,
    };
    // New capacity may be what a waiting drain or rebalance needed.
    this.launchQueued(state, ctx);
    return { ok: true, node: c.node };
  }

  private createStream(state: StreamMetadata, c: Extract<StreamCommand, { type: 'create-stream' }>): StreamResult {
    const existing = own(state.streams, c.stream);
    if (existing) {
      // Creating the same stream again where it already lives is a retry, not a conflict.
      if (c.node === undefined || c.node === existing.owner) return duplicate({ node: existing.owner, epoch: existing.epoch });
      return reject('stream_exists', `stream ${c.stream} already exists on node ${existing.owner}`);
    }
    const load = loadByNode(state);
    let owner: NodeId;
    if (c.node !== undefined) {
      const node = own(state.nodes, c.node);
      if (!node) return reject('unknown_node', `node ${c.node} is not registered: register it first`);
      if (node.draining) return reject('node_draining', `node ${c.node} is draining and takes no new streams`);
      if (!hasFreeSlot(node, load)) return reject('no_free_slots', `node ${c.node} has no free slot (${node.slots} slots)`);
      owner = node.id;
    } else {
      const node = leastLoadedNode(state, load);
      if (!node) return reject('no_free_slots', 'no registered, non-draining node has a free slot: register a node or add slots');
      owner = node.id;
    }
    state.streams[c.stream] = { id: c.stream, owner, epoch: 1, state: 'open', tail: 0, producers: {} };
    return { ok: true, node: owner, epoch: 1 };
  }

  /** Validates and records a pending transfer (seed: "Starting a transfer"). */
  private transfer(
    state: StreamMetadata,
    streamId: string,
    targetId: NodeId,
    reason: TransferReason,
    ctx: ApplyContext,
  ): StreamResult {
    const stream = own(state.streams, streamId);
    if (!stream) return reject('unknown_stream', `stream ${streamId} does not exist`);
    const pending = own(state.transfers, streamId);
    if (pending) {
      if (pending.target === targetId) return duplicate({ node: targetId });
      return reject(
        'already_transferring',
        `stream ${streamId} is already transferring from ${pending.source} to ${pending.target}; wait for it to settle`,
      );
    }
    // The same transfer proposed again after it completed is still a no-op, not an error.
    if (stream.owner === targetId) return duplicate({ node: targetId });
    const target = own(state.nodes, targetId);
    if (!target) return reject('unknown_node', `target node ${targetId} is not registered`);
    if (target.draining) return reject('node_draining', `target node ${targetId} is draining and takes no new streams`);
    if (!hasFreeSlot(target, loadByNode(state))) {
      return reject('no_free_slots', `target node ${targetId} has no free slot (${target.slots} slots, all taken)`);
    }
    this.startTransfer(state, stream, targetId, reason, ctx);
    return { ok: true, node: targetId, epoch: stream.epoch };
  }

  private startTransfer(
    state: StreamMetadata,
    stream: StreamRecord,
    target: NodeId,
    reason: TransferReason,
    ctx: ApplyContext,
  ): PendingTransfer {
    const pending: PendingTransfer = {
      stream: stream.id,
      source: stream.owner,
      target,
      epoch: stream.epoch,
      reason,
      since: ctx.position.index,
    };
    state.transfers[stream.id] = pending;
    return pending;
  }

  /** The owner records that it closed the stream at `epoch`, with everything flushed up to `tail`. */
  private close(state: StreamMetadata, c: Extract<StreamCommand, { type: 'close' }>): StreamResult {
    const stream = own(state.streams, c.stream);
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
    stream.state = 'closed';
    stream.tail = c.tail;
    stream.producers = { ...c.producers };
    return { ok: true, epoch: stream.epoch };
  }

  /**
   * Completes a transfer (seed: "The handoff"): accepted only if the stream is closed at exactly
   * `epoch`; then, in one step, the stream is re-pointed at the target, opened at the next epoch,
   * and the pending record removed. A duplicate is harmless; a stale one is rejected.
   */
  private complete(state: StreamMetadata, c: Extract<StreamCommand, { type: 'complete' }>, ctx: ApplyContext): StreamResult {
    const stream = own(state.streams, c.stream);
    if (!stream) return reject('unknown_stream', `stream ${c.stream} does not exist`);
    const pending = own(state.transfers, c.stream);
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
    stream.owner = pending.target;
    stream.epoch += 1;
    stream.state = 'open';
    delete state.transfers[c.stream];
    this.launchQueued(state, ctx);
    return { ok: true, node: stream.owner, epoch: stream.epoch };
  }

  /** The owner reopens a stream it closed without a transfer (after crash recovery). */
  private reopen(state: StreamMetadata, c: Extract<StreamCommand, { type: 'reopen' }>): StreamResult {
    const stream = own(state.streams, c.stream);
    if (!stream) return reject('unknown_stream', `stream ${c.stream} does not exist`);
    if (stream.owner !== c.node) return reject('not_owner', `node ${c.node} does not own stream ${c.stream}`);
    if (stream.state === 'open' && stream.epoch === c.epoch + 1) return duplicate({ epoch: stream.epoch });
    if (c.epoch < stream.epoch) return reject('stale_epoch', `reopen from epoch ${c.epoch} is stale: stream is at ${stream.epoch}`);
    if (own(state.transfers, c.stream)) {
      return reject('transfer_pending', `stream ${c.stream} is transferring; the target opens it`);
    }
    if (stream.state !== 'closed' || stream.epoch !== c.epoch) {
      return reject('not_closed_at_epoch', `stream ${c.stream} is not closed at epoch ${c.epoch}`);
    }
    stream.epoch += 1;
    stream.state = 'open';
    return { ok: true, node: stream.owner, epoch: stream.epoch };
  }

  private drain(state: StreamMetadata, c: Extract<StreamCommand, { type: 'drain' }>, ctx: ApplyContext): StreamResult {
    const node = own(state.nodes, c.node);
    if (!node) return reject('unknown_node', `node ${c.node} is not registered`);
    const inFlight = c.maxInFlight ?? node.drainInFlight;
    const unchanged = node.draining && node.drainInFlight === inFlight;
    node.draining = true;
    node.drainInFlight = inFlight;
    this.launchQueued(state, ctx);
    return unchanged ? duplicate({ node: node.id }) : { ok: true, node: node.id };
  }

  private undrain(state: StreamMetadata, c: Extract<StreamCommand, { type: 'undrain' }>): StreamResult {
    const node = own(state.nodes, c.node);
    if (!node) return reject('unknown_node', `node ${c.node} is not registered`);
    if (!node.draining) return duplicate({ node: node.id });
    // Transfers already pending finish; no new ones start.
    node.draining = false;
    return { ok: true, node: node.id };
  }

  private rebalance(state: StreamMetadata, c: Extract<StreamCommand, { type: 'rebalance' }>, ctx: ApplyContext): StreamResult {
    const moves = planRebalance(state);
    const maxInFlight = c.maxInFlight ?? DEFAULT_REBALANCE_IN_FLIGHT;
    state.rebalance = { queue: [...moves], maxInFlight, planned: moves.length, started: 0, skipped: 0 };
    this.launchQueued(state, ctx);
    return { ok: true, moves };
  }

  /**
   * Starts the transfers that drains and the rebalance queue are waiting to start, up to their
   * in-flight bounds. Runs inside apply, so progress needs no coordinator that could crash.
   */
  private launchQueued(state: StreamMetadata, ctx: ApplyContext): void {
    const draining = Object.values(state.nodes).filter((n) => n.draining);
    if (draining.length > 0) {
      const inFlight = new Map<NodeId, number>();
      for (const t of Object.values(state.transfers)) inFlight.set(t.source, (inFlight.get(t.source) ?? 0) + 1);
      const waiting = new Map<NodeId, StreamRecord[]>();
      for (const stream of Object.values(state.streams)) {
        if (own(state.transfers, stream.id) || !own(state.nodes, stream.owner)?.draining) continue;
        const list = waiting.get(stream.owner) ?? [];
        list.push(stream);
        waiting.set(stream.owner, list);
      }
      const load = loadByNode(state);
      for (const node of draining.sort((a, b) => (a.id < b.id ? -1 : 1))) {
        const streams = (waiting.get(node.id) ?? []).sort((a, b) => (a.id < b.id ? -1 : 1));
        let running = inFlight.get(node.id) ?? 0;
        for (const stream of streams) {
          if (running >= node.drainInFlight) break;
          const target = leastLoadedNode(state, load, node.id);
          if (!target) break;
          this.startTransfer(state, stream, target.id, 'drain', ctx);
          load.set(target.id, (load.get(target.id) ?? 0) + 1);
          running += 1;
        }
      }
    }
    const run = state.rebalance;
    if (run && run.queue.length > 0) {
      let running = Object.values(state.transfers).filter((t) => t.reason === 'rebalance').length;
      while (running < run.maxInFlight && run.queue.length > 0) {
        const move = run.queue.shift()!;
        const stream = own(state.streams, move.stream);
        const target = own(state.nodes, move.target);
        const valid =
          stream &&
          target &&
          !own(state.transfers, move.stream) &&
          stream.owner !== move.target &&
          !target.draining &&
          hasFreeSlot(target, loadByNode(state));
        if (!valid) {
          run.skipped += 1;
          continue;
        }
        this.startTransfer(state, stream, move.target, 'rebalance', ctx);
        run.started += 1;
        running += 1;
      }
    }
  }
}

export const streamStateMachine = (): StreamStateMachine => new StreamStateMachine();
