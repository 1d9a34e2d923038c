import type { ApplyContext, LogPosition, StateMachine, MemberId } from '@baton/contracts';
import type { ConfChange, Entry, Snapshot } from '../core/types.js';
import {
  IdempotencyWindow,
  type IdempotencyWindowSnapshot,
  type RememberedDecision as Decision,
  assembleState,
  captureState,
} from '@baton/consensus';
import { isSnapshotImage, type SnapshotImage } from '../storage/snapshot-image.js';

/** The data of a normal log entry: the command, and its idempotency key and fingerprint if any. */
export interface CommandData {
  c: unknown;
  k?: string;
  f?: string;
}

/**
 * A snapshot as its pieces: first the idempotency window, in pieces of `w` decisions (oldest
 * first), then the variant's state, in the pieces of its capture (`s`).
 */
export type SnapshotPiece = { w: IdempotencyWindowSnapshot<unknown> } | { s: unknown };

/** Decisions per window piece: small enough for one message, whatever the window's capacity. */
export const WINDOW_PIECE_DECISIONS = 1_000;

/** The snapshot data of earlier versions, one value holding state and window. */
interface WholeSnapshotData {
  sm: unknown;
  window: IdempotencyWindowSnapshot<unknown>;
}

/** A replicated state rebuilt from pieces, not yet in force. */
export interface AssembledState<S, R> {
  state: S;
  window: IdempotencyWindow<R>;
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

  /**
   * A frozen image of the state as applied now: the window's decisions by reference (they never
   * change) and the state machine's capture (O(1) for a machine with `capture`). Its pieces are
   * produced only when read, later, while applies go on.
   */
  capture(): SnapshotImage {
    return imageOf(this.window.snapshot() as IdempotencyWindowSnapshot<unknown>, [
      captureState(this.machine, this.state),
    ]);
  }

  /** The image of an assembled state not yet in force (a leader's snapshot, to be written). */
  captureOf(assembled: AssembledState<S, R>): SnapshotImage {
    return imageOf(assembled.window.snapshot() as IdempotencyWindowSnapshot<unknown>, [
      captureState(this.machine, assembled.state),
    ]);
  }

  /** A fresh assembly, fed the pieces of a snapshot in order (see SnapshotPiece). */
  assembly(): ReplicatedStateAssembly<S, R> {
    return new ReplicatedStateAssembly(this.machine, this.windowCapacity);
  }

  /** Puts an assembled snapshot in force: O(1), the work was done piece by piece. */
  install(snapshot: Snapshot, assembled: AssembledState<S, R>): void {
    this.state = assembled.state;
    this.window = assembled.window;
    this.voters = [...snapshot.meta.voters].sort();
    this.applied = { term: snapshot.meta.term, index: snapshot.meta.index };
  }

  /** Assembles and installs a snapshot in one go (a member starting from its storage). */
  restore(snapshot: Snapshot): void {
    const assembly = this.assembly();
    for (const piece of snapshotInImageForm(snapshot).data.pieces()) assembly.add(piece);
    this.install(snapshot, assembly.finish());
  }
}

/** A snapshot whose data is an image; one of earlier versions (state and window whole) becomes one. */
export function snapshotInImageForm(snapshot: Snapshot): Snapshot & { data: SnapshotImage } {
  if (isSnapshotImage(snapshot.data)) return snapshot as Snapshot & { data: SnapshotImage };
  const whole = snapshot.data as WholeSnapshotData;
  return {
    meta: snapshot.meta,
    data: imageOf(whole.window, [{ pieces: () => [whole.sm] }]),
  };
}

/** An image of a window (by reference) followed by the pieces of state captures. */
function imageOf(
  window: IdempotencyWindowSnapshot<unknown>,
  states: { pieces(): Iterable<unknown> }[],
): SnapshotImage {
  return {
    image: true,
    *pieces(): Iterable<SnapshotPiece> {
      for (let i = 0; i < window.length; i += WINDOW_PIECE_DECISIONS)
        yield { w: window.slice(i, i + WINDOW_PIECE_DECISIONS) };
      for (const capture of states) for (const s of capture.pieces()) yield { s };
    },
  };
}

/**
 * Rebuilds a replicated state from snapshot pieces, one at a time (each bounded work), so a
 * follower can take a leader's snapshot message by message while it goes on serving.
 */
export class ReplicatedStateAssembly<S, R> {
  /** Filled piece by piece (oldest decision first), so `finish` has no window left to rebuild. */
  private readonly window: IdempotencyWindow<R>;
  private readonly state;

  constructor(machine: StateMachine<S, unknown, R>, windowCapacity: number) {
    this.state = assembleState(machine);
    this.window = new IdempotencyWindow<R>(windowCapacity);
  }

  /** Throws on a piece that is not a snapshot piece, or that the state machine refuses. */
  add(piece: unknown): void {
    if (isWindowPiece(piece)) {
      for (const [key, decision] of piece.w) this.window.remember(key, decision as Decision<R>);
      return;
    }
    if (typeof piece === 'object' && piece !== null && 's' in piece) {
      this.state.add((piece as { s: unknown }).s);
      return;
    }
    throw new TypeError('a snapshot piece must be {w: decisions} or {s: state piece}');
  }

  finish(): AssembledState<S, R> {
    return { state: this.state.finish(), window: this.window };
  }
}

function isWindowPiece(piece: unknown): piece is { w: IdempotencyWindowSnapshot<unknown> } {
  if (typeof piece !== 'object' || piece === null || !Array.isArray((piece as { w?: unknown }).w))
    return false;
  for (const d of (piece as { w: unknown[] }).w) {
    if (!Array.isArray(d) || d.length !== 2 || typeof d[0] !== 'string') return false;
    const decision = d[1] as Partial<Decision<unknown>> | null;
    if (
      typeof decision !== 'object' ||
      decision === null ||
      typeof decision.fingerprint !== 'string' ||
      typeof decision.position?.term !== 'number' ||
      typeof decision.position?.index !== 'number'
    )
      return false;
  }
  return true;
}
