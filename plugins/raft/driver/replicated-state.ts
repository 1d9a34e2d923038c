import type {
  ApplyContext,
  LogPosition,
  StateMachine,
} from '../../../framework/contracts/metadata-consensus.js';
import type { MemberId } from '../../../framework/contracts/peer-transport.js';
import type { ConfChange, Entry, Snapshot } from '../core/types.js';
import {
  IdempotencyWindow,
  type IdempotencyWindowSnapshot,
  type RememberedDecision as Decision,
} from '../../../framework/consensus/idempotency-window.js';

/** The data of a normal log entry: the command, and its idempotency key and fingerprint if any. */
export interface CommandData {
  c: unknown;
  k?: string;
  f?: string;
}

/** What a snapshot carries: the variant's state and the idempotency window, together. */
export interface SnapshotData {
  sm: unknown;
  window: IdempotencyWindowSnapshot<unknown>;
}

export type ApplyOutcome<R> =
  | { kind: 'applied'; result: R }
  /** Same key, same command, already decided: the entry changed nothing. */
  | { kind: 'replayed'; decision: Decision<R> }
  /** Same key, different command: the entry changed nothing and its proposer is refused. */
  | { kind: 'key_reused'; decision: Decision<R> }
  | { kind: 'noop' }
  | { kind: 'conf' };

/**
 * The variant's state machine wrapped with what Raft replicates alongside it: the idempotency
 * window (so a retry finds its decision on any member) and the voters in force. Every member
 * applies the same entries to it in the same order and reaches the same value.
 */
export class ReplicatedState<S, C, R> {
  state: S;
  window: IdempotencyWindow<R>;
  voters: MemberId[];
  applied: LogPosition = { term: 0, index: 0 };

  constructor(
    private readonly machine: StateMachine<S, C, R>,
    private readonly windowCapacity: number,
    bootstrapVoters: MemberId[],
  ) {
    this.state = machine.initial();
    this.window = new IdempotencyWindow<R>(windowCapacity);
    this.voters = [...bootstrapVoters].sort();
  }

  /** Applies one committed entry. A throw from the state machine propagates: it is a bug. */
  apply(e: Entry): ApplyOutcome<R> {
    if (e.index !== this.applied.index + 1) {
      throw new Error(`apply out of order: entry ${e.index} after ${this.applied.index}`);
    }
    const position = { term: e.term, index: e.index };
    this.applied = position;
    if (e.type === 'conf') {
      this.voters = [...(e.data as ConfChange).voters].sort();
      this.machine.membershipChanged?.(this.state, this.context(position));
      return { kind: 'conf' };
    }
    if (e.data === null || e.data === undefined) return { kind: 'noop' };
    const data = e.data as CommandData;
    if (data.k !== undefined) {
      const known = this.window.lookup(data.k);
      if (known)
        return known.fingerprint === data.f
          ? { kind: 'replayed', decision: known }
          : { kind: 'key_reused', decision: known };
    }
    const result = this.machine.apply(this.state, data.c as C, this.context(position));
    if (data.k !== undefined)
      this.window.remember(data.k, { fingerprint: data.f!, position, result });
    return { kind: 'applied', result };
  }

  private context(position: LogPosition): ApplyContext {
    return { position, voters: this.voters };
  }

  snapshotData(): SnapshotData {
    return {
      sm: this.machine.snapshot(this.state),
      window: this.window.snapshot() as IdempotencyWindowSnapshot<unknown>,
    };
  }

  restore(snapshot: Snapshot): void {
    const data = snapshot.data as SnapshotData;
    this.state = this.machine.restore(structuredClone(data.sm));
    this.window = IdempotencyWindow.restore(
      this.windowCapacity,
      structuredClone(data.window) as IdempotencyWindowSnapshot<R>,
    );
    this.voters = [...snapshot.meta.voters].sort();
    this.applied = { term: snapshot.meta.term, index: snapshot.meta.index };
  }
}
