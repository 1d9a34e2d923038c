import type { Timer } from '@baton/contracts';
import type { Change } from './changed-streams.js';
import type { StreamCommand } from './commands.js';
import type { StreamId, StreamMetadata, StreamRecord } from './model.js';
import type { StreamNode } from './stream-node.js';

/** The seed's retry cadence: "the watcher loop on every node retries once per second". */
export const WATCHER_INTERVAL_MS = 1_000;

type Action = { kind: 'none' } | { kind: 'run'; label: string; run: () => Promise<void> };

const NONE: Action = { kind: 'none' };

/**
 * The loop on every node that turns the published metadata view into local steps (seed 000,
 * "The handoff" and "Crashes"). There is no node-to-node call: the source sees the pending
 * record and closes, flushes and proposes completion; the target sees the stream placed on it
 * and opens at the next epoch; a restarted node finds its closes in its WAL and proposes them.
 * It reacts to what each apply changed (the streams the entry names), never rescanning the
 * state; once per second it re-examines only what concerns this node and may need a retry: the
 * pending transfers from and to it (an index), its unsettled closes and the steps that failed, so
 * a step that failed (no leader, a store outage) is retried without anyone asking. When entries
 * were missed (a snapshot installed, a partition healed) it examines every stream it owns once.
 */
export class HandoffWatcher {
  private running = new Set<StreamId>();
  /** Streams whose step failed: they wait for the next once-per-second pass. */
  private failed = new Set<StreamId>();
  /** Streams to examine at the next pass (a microtask after a change). */
  private dirty = new Set<StreamId>();
  /** The next pass examines every stream this node owns or holds (entries were missed). */
  private everything = false;
  private timer?: Timer;
  private scanQueued = false;
  private stopped = true;
  private unsubscribe?: () => void;

  constructor(
    private readonly node: StreamNode,
    private readonly intervalMs = WATCHER_INTERVAL_MS,
  ) {}

  start(): void {
    this.stopped = false;
    this.unsubscribe = this.node.onChange((change) => this.noteChange(change));
    this.noteChange({ everything: true });
    this.arm();
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    this.timer?.cancel();
  }

  /** Steps in progress, for tests and progress displays. */
  get busy(): number {
    return this.running.size;
  }

  private arm(): void {
    this.timer = this.node.clock.setTimer(this.intervalMs, () => {
      if (this.stopped) return;
      this.retryPass();
      this.arm();
    });
  }

  /** The once-per-second pass: what concerns this node and may need a retry, from indexes. */
  private retryPass(): void {
    if (this.node.isStopped) return this.stop();
    const state = this.node.metadata();
    for (const stream of this.failed) this.dirty.add(stream);
    this.failed.clear();
    for (const t of state.transfersFrom(this.node.self)) this.dirty.add(t.stream);
    for (const t of state.transfersTo(this.node.self)) this.dirty.add(t.stream);
    for (const stream of this.node.unsettledStreams()) this.dirty.add(stream);
    // A view that moved without this node being told (a snapshot installed): look at everything once.
    if (!this.node.caughtUpWithView) this.everything = true;
    this.scan();
  }

  private noteChange(change: Change): void {
    if ('everything' in change) this.everything = true;
    else for (const stream of change.streams) this.dirty.add(stream);
    this.requestScan();
  }

  /** Coalesces bursts of applies into one pass. */
  private requestScan(): void {
    if (this.scanQueued || this.stopped) return;
    this.scanQueued = true;
    queueMicrotask(() => {
      this.scanQueued = false;
      if (!this.stopped) this.scan();
    });
  }

  private scan(): void {
    if (this.node.isStopped) return this.stop();
    const state = this.node.metadata();
    const candidates = this.dirty;
    this.dirty = new Set();
    if (this.everything) {
      this.everything = false;
      for (const stream of this.node.localStreams()) candidates.add(stream);
      for (const stream of state.streamsOwnedBy(this.node.self)) candidates.add(stream.id);
      for (const t of state.transfersTo(this.node.self)) candidates.add(t.stream);
    }
    for (const stream of candidates) {
      // A failed step waits for the once-per-second pass; a running one re-examines when done.
      if (this.running.has(stream) || this.failed.has(stream)) continue;
      const action = this.decide(state, stream);
      if (action.kind === 'none') continue;
      this.running.add(stream);
      let failed = false;
      action
        .run()
        .catch((error) => {
          failed = true;
          this.failed.add(stream);
          this.node.logger.warn({ stream, step: action.label, err: error }, 'handoff step failed; retrying within a second');
        })
        .finally(() => {
          this.running.delete(stream);
          // The step may have changed what this stream needs next.
          if (!failed) this.noteChange({ streams: [stream] });
        });
    }
  }

  /** The next local step for one stream, from the view and this node's own sessions. */
  private decide(state: StreamMetadata, streamId: StreamId): Action {
    const node = this.node;
    const record = state.stream(streamId);
    if (!record) return NONE;
    const pending = state.transfer(streamId);
    const session = node.session(streamId);
    const closed = node.closedSession(streamId);

    // The object store refused this node's write: another node took the stream over.
    if (session?.fenced) return this.step('drop fenced', () => node.dropFenced(streamId));
    // A live session the metadata no longer backs (someone else owns a later epoch): retire it.
    if (session && session.writable && (record.owner !== node.self || record.epoch !== session.epoch)) {
      return this.step('retire', () => node.closeSession(streamId).then(() => undefined));
    }
    // Source, close recorded: complete first (it is on the handoff's critical path), settle later.
    if (record.owner === node.self && record.state === 'closed' && pending && pending.source === node.self) {
      return this.step('complete', () =>
        this.propose({
          type: 'complete',
          stream: streamId,
          source: pending.source,
          target: pending.target,
          epoch: record.epoch,
          // When, for the completion's audit record.
          at: Math.max(0, Math.floor(node.clock.now())),
        }),
      );
    }
    // A close this node remembers is settled once the metadata recorded it or moved past it.
    if (closed && (record.epoch > closed.epoch || (record.epoch === closed.epoch && record.state === 'closed'))) {
      return this.step('settle', () => node.settle(streamId, closed.epoch));
    }
    const lost = node.fencedAt(streamId);
    if (lost !== undefined) {
      // Until the view shows the takeover, this node must not reopen what it lost.
      if (record.epoch <= lost) return NONE;
      node.forgetFence(streamId);
    }
    if (record.owner !== node.self) return NONE;

    if (record.state === 'open') {
      const mustClose = pending !== undefined && pending.source === node.self;
      if (session && session.epoch === record.epoch && session.state !== 'dead') {
        if (!mustClose && session.writable) return NONE;
        // Source (or a session that closed on its own): stop appends, flush, close at this
        // epoch, record the close. closeSession is idempotent, so a retry only re-proposes.
        return this.step('close', async () => {
          const done = await node.closeSession(streamId);
          await this.propose({ type: 'close', node: node.self, ...done });
        });
      }
      if (closed && closed.epoch === record.epoch) {
        // A close from before a restart (or one whose proposal failed): record it now.
        return this.step('close', () => this.propose({ type: 'close', node: node.self, ...closed }));
      }
      if (node.isOpening(streamId)) return NONE;
      if (mustClose && record.takeover === undefined) {
        // Never opened at this epoch here, so nothing was appended: close at the recorded tail.
        return this.step('close', () => this.propose(closeAsRecorded(record, node.self)));
      }
      // A taken-over stream's recorded tail is only where the lost owner's epoch began: its
      // records past it are found (and the lost owner fenced) by opening with a claim, even when
      // the stream is to move on at once; the close then records the tail the claim found.
      if (mustClose) {
        return this.step('claim', () => node.openSession(streamId, record.epoch, record.tail, record.producers, { claim: true }));
      }
      // Placed here and open in the metadata: open now (the pre-warm), before any request asks.
      return this.step('open', () =>
        node.openSession(streamId, record.epoch, record.tail, record.producers, { claim: record.takeover !== undefined }),
      );
    }

    // Closed at record.epoch, with no transfer to complete: the owner reopens it.
    if (!pending) {
      return this.step('reopen', () => this.propose({ type: 'reopen', stream: streamId, node: node.self, epoch: record.epoch }));
    }
    return NONE;
  }

  private step(label: string, run: () => Promise<void>): Action {
    return { kind: 'run', label, run };
  }

  /**
   * Proposes a step's command. A rejection is not retried by itself: the next pass re-decides
   * from the view (a stale completion, say, simply has nothing left to do). Errors (no leader,
   * outcome unknown) propagate so the stream backs off to the next once-per-second pass.
   */
  private async propose(command: StreamCommand): Promise<void> {
    const receipt = await this.node.consensus.propose(command);
    if (!receipt.result.ok) {
      // Re-deciding at once would propose the same thing again: wait for the next pass.
      throw new StepRefusedError(command, receipt.result.reason, receipt.result.message);
    }
  }
}

/** The metadata refused a step (a race the next pass resolves from the newer view). */
export class StepRefusedError extends Error {
  constructor(
    readonly command: StreamCommand,
    readonly reason: string,
    message: string,
  ) {
    super(`${command.type} refused (${reason}): ${message}`);
    this.name = 'StepRefusedError';
  }
}

function closeAsRecorded(record: StreamRecord, self: string): StreamCommand {
  return { type: 'close', stream: record.id, node: self, epoch: record.epoch, tail: record.tail, producers: record.producers };
}
