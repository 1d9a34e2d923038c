/**
 * One consensus handed to several in-process hosts as if each had its own: its `start` and
 * `stop` are hidden, so the first host to stop does not stop it for the others (and none starts
 * it twice). Methods stay bound to the consensus itself.
 */
export function sharedConsensus<T extends object>(consensus: T): T {
  return new Proxy(consensus, {
    get(target, property) {
      if (property === 'start' || property === 'stop') return undefined;
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
