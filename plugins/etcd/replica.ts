import type {
  ApplyContext,
  LogPosition,
  StateMachine,
} from '@baton/contracts';
import {
  IdempotencyWindow,
  type IdempotencyWindowSnapshot,
  type RememberedDecision,
} from '@baton/consensus';
import { fingerprintOf, type LogEntry, type MalformedEntry } from './log-entry.js';

/** Everything a member needs to resume applying after `seq`. JSON-serialisable. */
export interface ReplicaSnapshot {
  seq: number;
  applied: LogPosition;
  voters: string[];
  state: unknown;
  window: IdempotencyWindowSnapshot<unknown>;
}

/** What applying one entry did, for the proposer waiting on it and for watchers. */
export type ApplyOutcome<C, R> =
  | { kind: 'applied'; id: string; position: LogPosition; command: C; result: R }
  | { kind: 'replayed'; id: string; decision: RememberedDecision<R> }
  | { kind: 'key_reused'; id: string; key: string }
  | { kind: 'voters'; id: string; position: LogPosition; changed: boolean; refusal?: string }
  | { kind: 'bootstrap'; position: LogPosition }
  | { kind: 'skipped'; position: LogPosition; reason: string };

/** The state machine threw: a bug that must stop the member rather than let replicas diverge. */
export class ApplyFailure extends Error {
  constructor(
    readonly seq: number,
    cause: unknown,
  ) {
    super(`the state machine threw applying log entry ${seq}: ${String(cause)}`, { cause });
  }
}

/**
 * The applied side of one member: the variant's state, the idempotency window and the voters, as
 * a pure function of the log prefix up to `seq`. No I/O: the follower feeds it entries in order,
 * so every member that applied the same prefix holds the same replica.
 */
export class Replica<S, C, R> {
  seq = 0;
  applied: LogPosition = { term: 0, index: 0 };
  voters: string[] = [];
  state: S;
  private window: IdempotencyWindow<R>;

  constructor(
    private readonly machine: StateMachine<S, C, R>,
    private readonly windowCapacity: number,
  ) {
    this.state = machine.initial();
    this.window = new IdempotencyWindow<R>(windowCapacity);
  }

  /** The decision committed under `key`, while the window remembers it. */
  decision(key: string): RememberedDecision<R> | undefined {
    return this.window.lookup(key);
  }

  /** Applies the entry at `seq` (which must be the next one) committed at etcd `revision`. */
  apply(seq: number, revision: number, entry: LogEntry | MalformedEntry): ApplyOutcome<C, R> {
    if (seq !== this.seq + 1) {
      throw new RangeError(
        `log entry ${seq} applied after ${this.seq}: entries must come in order`,
      );
    }
    const term = 'term' in entry ? Math.max(this.applied.term, entry.term) : this.applied.term;
    // Entries of one transaction share its revision: the second and later take the next indexes
    // (so later transactions' entries may sit past their revision), deterministically on every member.
    const position: LogPosition = { term, index: Math.max(revision, this.applied.index + 1) };
    const outcome = this.applyAt(seq, position, entry);
    this.seq = seq;
    this.applied = position;
    return outcome;
  }

  snapshot(): ReplicaSnapshot {
    return {
      seq: this.seq,
      applied: { ...this.applied },
      voters: [...this.voters],
      state: this.machine.snapshot(this.state),
      window: this.window.snapshot() as IdempotencyWindowSnapshot<unknown>,
    };
  }

  restore(snapshot: ReplicaSnapshot): void {
    this.state = this.machine.restore(structuredClone(snapshot.state));
    this.window = IdempotencyWindow.restore(
      this.windowCapacity,
      structuredClone(snapshot.window) as IdempotencyWindowSnapshot<R>,
    );
    this.voters = [...snapshot.voters];
    this.seq = snapshot.seq;
    this.applied = { ...snapshot.applied };
  }

  private applyAt(
    seq: number,
    position: LogPosition,
    entry: LogEntry | MalformedEntry,
  ): ApplyOutcome<C, R> {
    switch (entry.kind) {
      case 'malformed':
        return { kind: 'skipped', position, reason: entry.reason };
      case 'bootstrap':
        // The first entry of a log: the initial configuration, not a change (as Raft's ConfState).
        if (this.voters.length === 0) this.voters = sortedUnique(entry.voters);
        return { kind: 'bootstrap', position };
      case 'voters':
        return this.changeVoters(seq, position, entry.id, entry.change, entry.voter);
      case 'command': {
        if (entry.key !== undefined) {
          // The append transaction claims the key atomically, so a second entry under a key the
          // window still holds cannot be written; applying it alike on every member keeps the
          // replicas equal should one ever appear.
          const known = this.window.lookup(entry.key);
          if (known && known.fingerprint === entry.fingerprint)
            return { kind: 'replayed', id: entry.id, decision: known };
          if (known) return { kind: 'key_reused', id: entry.id, key: entry.key };
          if (fingerprintOf(entry.command) !== entry.fingerprint) {
            return {
              kind: 'skipped',
              position,
              reason: 'the fingerprint does not match the command',
            };
          }
        }
        const command = entry.command as C;
        let result: R;
        try {
          result = this.machine.apply(this.state, command, this.context(position));
        } catch (error) {
          throw new ApplyFailure(seq, error);
        }
        if (entry.key !== undefined) {
          this.window.remember(entry.key, { fingerprint: entry.fingerprint!, position, result });
        }
        return { kind: 'applied', id: entry.id, position, command, result };
      }
    }
  }

  private changeVoters(
    seq: number,
    position: LogPosition,
    id: string,
    change: 'add' | 'remove',
    voter: string,
  ): ApplyOutcome<C, R> {
    const isVoter = this.voters.includes(voter);
    if ((change === 'add' && isVoter) || (change === 'remove' && !isVoter)) {
      return { kind: 'voters', id, position, changed: false };
    }
    if (change === 'remove' && this.voters.length === 1) {
      return {
        kind: 'voters',
        id,
        position,
        changed: false,
        refusal: `cannot remove ${voter}: it is the last voter, and a group needs one`,
      };
    }
    this.voters =
      change === 'add'
        ? sortedUnique([...this.voters, voter])
        : this.voters.filter((member) => member !== voter);
    try {
      this.machine.membershipChanged?.(this.state, this.context(position));
    } catch (error) {
      throw new ApplyFailure(seq, error);
    }
    return { kind: 'voters', id, position, changed: true };
  }

  private context(position: LogPosition): ApplyContext {
    return { position: { ...position }, voters: [...this.voters] };
  }
}

function sortedUnique(members: readonly string[]): string[] {
  return [...new Set(members)].sort();
}
