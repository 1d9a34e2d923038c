import type {
  StateAssembly,
  StateCapture,
  StateMachine,
} from '@baton/contracts';

/**
 * A capture of `state` through the machine's own `capture`, or, for a machine without one,
 * its whole `snapshot(state)` as the only piece (a deep copy taken now: O(state), as before
 * pieces existed).
 */
export function captureState<S>(machine: StateMachine<S, any, any>, state: S): StateCapture {
  if (machine.capture) return machine.capture(state);
  const whole = machine.snapshot(state);
  return { pieces: () => [whole] };
}

/**
 * An assembly through the machine's own `assemble`, or, for a machine without one, `restore`
 * of the single piece its fallback capture produced. That piece is cloned first: it may be
 * shared with a stored snapshot, and `restore` may hand its objects to the live state.
 */
export function assembleState<S>(machine: StateMachine<S, any, any>): StateAssembly<S> {
  if (machine.assemble) return machine.assemble();
  let whole: { piece: unknown } | undefined;
  return {
    add(piece) {
      if (whole) throw new Error('a snapshot of a state machine without capture has one piece, got more');
      whole = { piece };
    },
    finish() {
      if (!whole) throw new Error('a snapshot of a state machine without capture has one piece, got none');
      return machine.restore(structuredClone(whole.piece));
    },
  };
}
