import type { Model } from './model.js';

/**
 * How the checker tells two model states apart: by the model's `stateKey` when it has one (a
 * string, so a map finds equal states at once), else by its `equal`, else by JSON.stringify.
 */
export interface StateIdentity<S> {
  /** Absent when only `equal` can tell: states must then be compared one by one. */
  key: ((state: S) => string) | undefined;
  same(a: S, b: S): boolean;
}

export function stateIdentity<S>(
  model: Pick<Model<S, unknown, unknown>, 'stateKey' | 'equal'>,
): StateIdentity<S> {
  const key = model.stateKey ?? (model.equal ? undefined : (s: S) => JSON.stringify(s));
  if (key) return { key, same: (a, b) => key(a) === key(b) };
  const equal = model.equal!;
  return { key: undefined, same: (a, b) => equal(a, b) };
}
