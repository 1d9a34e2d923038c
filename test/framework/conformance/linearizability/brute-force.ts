import type { Operation } from '@baton/conformance/internal/linearizability/history.js';

/** A sequential specification as plainly as it can be put: the output of `input` in `state`. */
export interface Spec<S, I, O> {
  init: S;
  apply(state: S, input: I): { output: O; state: S };
  sameOutput(a: O, b: O): boolean;
}

/**
 * Linearizability by definition, for small histories: tries every order of the operations that
 * respects real time (one that returned strictly before another was called comes first), with
 * every unknown-outcome operation either placed somewhere after its call or left out, and asks
 * whether some order gives every known output. No memo, no partition, no pruning: the reference
 * the checker is compared against.
 */
export function bruteForceLinearizable<S, I, O>(
  spec: Spec<S, I, O>,
  history: ReadonlyArray<Operation<I, O>>,
): boolean {
  const placed = new Array<boolean>(history.length).fill(false);
  const mustPrecede = history.map((op) =>
    history.flatMap((other, j) =>
      other.return !== undefined && other.return < op.call ? [j] : [],
    ),
  );
  const returned = history.filter((op) => op.return !== undefined).length;

  const search = (state: S, returnedPlaced: number): boolean => {
    if (returnedPlaced === returned) return true;
    for (let i = 0; i < history.length; i++) {
      if (placed[i] || mustPrecede[i].some((j) => !placed[j])) continue;
      const op = history[i];
      const { output, state: next } = spec.apply(state, op.input);
      if (op.output !== undefined && !spec.sameOutput(op.output, output)) continue;
      placed[i] = true;
      const found = search(next, returnedPlaced + (op.return !== undefined ? 1 : 0));
      placed[i] = false;
      if (found) return true;
    }
    return false;
  };
  return search(spec.init, 0);
}
